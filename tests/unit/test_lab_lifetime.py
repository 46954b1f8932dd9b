"""Labs that several test modules share: collection keeps those modules
together, a lab is built once for them, a module that wants fresh guests
gets them, and a lab stops after its last module or after a failure."""

from __future__ import annotations

from types import ModuleType, SimpleNamespace

import pytest

from tests.lab import lifetime, paths


def module(name: str, shares: str | None = None, fresh: bool = False) -> ModuleType:
    """A test module naming the shared lab `shares` (of tests/lab/labs.py) by its marker."""
    mod = ModuleType(name)
    if shares is not None:
        mod.pytestmark = [pytest.mark.lab(shares, fresh=fresh)]
    return mod


def items(*modules: ModuleType) -> list[SimpleNamespace]:
    return [SimpleNamespace(module=m, nodeid=f"{m.__name__}::t{i}")
            for m in modules for i in range(2)]


def test_modules_sharing_a_lab_run_together_where_the_first_was():
    boot, first, kf, pairing, router, ui = (
        module("boot", "image"), module("first"), module("kf", "image"),
        module("pairing"), module("router", "router"), module("ui", "router"))
    order = [i.module.__name__ for i in lifetime.grouped(items(boot, first, router, kf,
                                                                pairing, ui))]
    assert order == ["boot"] * 2 + ["kf"] * 2 + ["first"] * 2 + ["router"] * 2 + ["ui"] * 2 + [
        "pairing"] * 2


def test_a_module_that_asks_for_fresh_guests_goes_first_in_its_lab():
    """(the adaptive lab sorts before the first-boot test, which needs the
    guests as first booted: without this the shared lab would boot twice)"""
    adaptive, first_boot, selftest = (module("adaptive", "bloated"),
                                      module("first_boot", "bloated", fresh=True),
                                      module("selftest", "bloated"))
    order = [i.module.__name__ for i in lifetime.grouped(items(adaptive, first_boot, selftest))]
    assert order == ["first_boot"] * 2 + ["adaptive"] * 2 + ["selftest"] * 2


def test_a_lab_ends_after_its_last_module_or_a_failure():
    boot, kf, other = module("boot", "image"), module("kf", "image"), module("other")
    assert not lifetime.ends_after(boot, boot, failed=False)
    assert not lifetime.ends_after(boot, kf, failed=False)
    assert lifetime.ends_after(kf, other, failed=False)
    assert lifetime.ends_after(kf, None, failed=False)
    assert lifetime.ends_after(boot, kf, failed=True)  # the next module boots a fresh lab
    assert not lifetime.ends_after(boot, boot, failed=True)  # not in the module's midst


@pytest.fixture
def labs(tmp_path, monkeypatch) -> lifetime.SharedLabs:
    monkeypatch.setattr(paths, "RUNS", tmp_path)
    return lifetime.SharedLabs()


def test_a_shared_lab_is_built_once(labs):
    built = []

    def bloated_lab(make_lab):
        built.append(object())
        return built[-1]

    first = labs.get("bloated", bloated_lab, "tests.vm.test_a")
    assert labs.get("bloated", bloated_lab, "tests.vm.test_b") is first
    # a module that wants guests as first booted gets new ones once another used them
    fresh = labs.get("bloated", bloated_lab, "tests.vm.test_c", fresh=True)
    assert fresh is not first and len(built) == 2
    assert labs.get("bloated", bloated_lab, "tests.vm.test_c", fresh=True) is fresh
    labs.close_all()
    assert not labs.open


def test_a_lab_that_fails_to_build_is_not_kept(labs):
    def broken_lab(make_lab):
        raise RuntimeError("no image")

    with pytest.raises(RuntimeError, match="no image"):
        labs.get("broken", broken_lab, "tests.vm.test_a")
    assert not labs.open


def test_a_lab_started_early_is_the_one_its_first_module_gets(labs):
    import threading

    built: list[str] = []
    release = threading.Event()

    def slow_lab(make_lab):
        release.wait(5)
        built.append(threading.current_thread().name)
        return "the lab"

    labs.start_early("slow", slow_lab, "boot")
    release.set()
    assert labs.get("slow", slow_lab, "boot") == "the lab"
    assert labs.get("slow", slow_lab, "data") == "the lab"
    assert built == ["early-slow"]  # built once, in the background


def test_a_lab_started_early_that_fails_fails_its_first_module(labs):
    def broken_lab(make_lab):
        raise RuntimeError("no dev image")

    labs.start_early("broken", broken_lab, "boot")
    with pytest.raises(RuntimeError, match="no dev image"):
        labs.get("broken", broken_lab, "boot")
