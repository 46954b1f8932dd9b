"""Fixtures for the QEMU lab tests: labs that are always torn down, and whose
consoles' logs are kept under out/lab-runs/ when a test fails; labs that
several modules share (tests/lab/lifetime.py says how)."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from hypothesis import settings

from tests.lab import lanes, lifetime, marks, paths
from tests.lab.lab import BOOTS, GUEST_CPU, Lab
from tests.lab.paths import TOP
from tests.lab.saved import SAVES

# the keel package is tested from its source tree
sys.path.insert(0, str(TOP / "tui"))

# CI runs the property tests with a fixed seed, so a run is repeatable;
# developers get new examples each run
settings.register_profile("ci", derandomize=True, database=None)
if os.environ.get("CI"):
    settings.load_profile("ci")


@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if report.failed:
        item.keel_failed = True
        item.module.keel_failed = True


def _lab_factory(name: str, failed: Callable[[], bool]) -> Iterator[Callable[[], Lab]]:
    where = lifetime.workdir(name)
    labs: list[Lab] = []
    yield lifetime.factory(where, labs)
    lifetime.finish(labs, where, failed())


@pytest.fixture
def make_lab(request) -> Iterator[Callable[[], Lab]]:
    """A factory of labs for one test; every guest is stopped afterwards."""
    yield from _lab_factory(request.node.nodeid,
                            lambda: getattr(request.node, "keel_failed", False))


@pytest.fixture(scope="module")
def make_module_lab(request) -> Iterator[Callable[[], Lab]]:
    """Like make_lab, shared by the tests of one module (run in file order)."""
    yield from _lab_factory(request.module.__name__,
                            lambda: getattr(request.module, "keel_failed", False))


_SHARED = lifetime.SharedLabs()


def pytest_configure(config: pytest.Config) -> None:
    for line in marks.MARKERS:
        config.addinivalue_line("markers", line)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--lane", choices=("all", *lanes.LANES), default="all",
                     help="which tests to run (tests/lab/lanes.py): all (default), the "
                          "host tests (no guest), or the modules of the labs of that lane "
                          "(tests/lab/labs.py)")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    keep, other = lanes.select(items, config.getoption("lane"))
    if other:
        config.hook.pytest_deselected(items=other)
    items[:] = lanes.quiet_last(lifetime.grouped(keep))


@pytest.fixture(scope="module", autouse=True)
def _host_alone(request) -> None:
    """A module that needs the host to itself (`host_alone`) waits, in the
    quiet lane, until the side and main lanes take only idle CPU time (or
    have ended: tests/lab/lanes.py's runner decides). Nothing it waits
    for is a measurement, so first: the lab it shares is up, the fixtures it
    names in the marker's `first` are set up, and the labs of the host_alone
    modules after it start; they are up before it goes on."""
    said = marks.traits(request.module)
    if said.alone and request.config.getoption("lane") == "quiet":
        _boot_later_alone_labs(request.session.items, request.module)
        if said.shared:
            request.getfixturevalue("shared_lab")
        for name in said.first:
            request.getfixturevalue(name)
        waited = lanes.wait_for_other_lanes(ended=said.saturates)
        _SHARED.join_early()
        if waited > 1:
            print(f"(waited {waited / 60:.1f} min for the host)")


def _boot_later_alone_labs(items: list[pytest.Item], module: Any) -> None:
    """Start, in the background, the shared labs of the host_alone modules
    after `module` that are not up or starting yet."""
    for other in lanes.alone_labs(items, module):
        lab = marks.traits(other).lab
        assert lab is not None
        if lab.name not in _SHARED.open and lab.name not in _SHARED.early:
            _SHARED.start_early(lab.name, lab.build, other.__name__)


def pytest_collection_finish(session: pytest.Session) -> None:
    """Run as one process (`--lane all`), the first shared lab boots in the
    background while the host tests (which come first) run: the lab's first
    minute or two is not waited for."""
    items = session.items
    first = next((i for i, item in enumerate(items)
                  if lifetime.shared_name(getattr(item, "module", None))), None)
    if first is None or first == 0 or session.config.option.collectonly:
        return
    if session.config.getoption("lane") != "all":
        # a lab lane runs beside the others: booting its first shared lab
        # beside its own first module's lab booted both at once (the main
        # lane's router lab beside pairing's, the quiet lane's bloated lab
        # beside the tunnel's: fourteen guests, and the tunnel lab's boot
        # timed out)
        return
    module = items[first].module
    lab = marks.traits(module).lab
    assert lab is not None
    _SHARED.start_early(lab.name, lab.build, module.__name__)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None):
    yield
    module = getattr(item, "module", None)
    name = lifetime.shared_name(module)
    if name in _SHARED.open:
        failed = getattr(module, "keel_failed", False)
        if lifetime.ends_after(module, getattr(nextitem, "module", None), failed):
            _SHARED.close(name, failed)


@pytest.fixture(scope="module")
def shared_lab(request) -> Any:
    """The shared lab the module names with `pytest.mark.lab(name)`, built
    once for the modules that name it."""
    said = marks.traits(request.module)
    if said.lab is None or not said.lab.shared:
        raise pytest.UsageError(f"{request.module.__name__} uses shared_lab without naming a "
                                "shared lab (pytest.mark.lab, tests/lab/labs.py)")
    return _SHARED.get(said.lab.name, said.lab.build, request.module.__name__,
                       fresh=said.fresh)


@pytest.fixture(scope="session", autouse=True)
def _close_shared_labs() -> Iterator[None]:
    yield
    _SHARED.close_all()


# --- where the suite's time goes (printed at the end of `make test`) ------------
_SECONDS: dict[str, float] = {}


_EACH: list[tuple[float, str, str]] = []  # (seconds, phase, test): all of them


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    module = report.nodeid.split("::")[0]
    _SECONDS[module] = _SECONDS.get(module, 0.0) + report.duration
    if module.startswith("tests/vm/"):
        _EACH.append((report.duration, report.when, report.nodeid))


def pytest_terminal_summary(terminalreporter) -> None:
    if not any(m.startswith("tests/vm/") for m in _SECONDS):
        return
    write = terminalreporter.write_line
    lab = {m: t for m, t in _SECONDS.items() if m.startswith("tests/vm/")}
    host = sum(t for m, t in _SECONDS.items() if m not in lab)
    terminalreporter.section("time per lab module (setup, tests, teardown)")
    for module, seconds in sorted(lab.items(), key=lambda kv: -kv[1]):
        write(f"{seconds / 60:6.1f} min  {module}")
    write(f"{sum(lab.values()) / 60:6.1f} min  all lab modules; host tests {host / 60:.1f} min")
    # every lab test's phases, slowest first, for a closer look than --durations
    lane = terminalreporter.config.getoption("lane")
    every = paths.RUNS / f"durations-{lane}.txt"
    every.parent.mkdir(parents=True, exist_ok=True)
    every.write_text("".join(f"{s:8.1f} s  {when:8}  {nodeid}\n"
                             for s, when, nodeid in sorted(_EACH, reverse=True)))
    write(f"(every lab test's time: {every})")
    if SAVES:
        terminalreporter.section("guests booted to be saved (tests/lab/saved.py)")
        for kinds, seconds, cpu in SAVES:
            write(f"{seconds:6.1f} s  {cpu / 60:.1f} CPU-min  {', '.join(kinds)}")
    if BOOTS:
        terminalreporter.section("time per lab start (QEMU started -> every guest logged in "
                                 "or restored)")
        for name, guests, seconds in BOOTS:
            write(f"{seconds:6.1f} s  {name}: {', '.join(guests)}")
        guests = [g for b in BOOTS for g in b[1]]
        restored = sum(g.endswith(" (restored)") for g in guests)
        write(f"{sum(b[2] for b in BOOTS) / 60:6.1f} min  {len(BOOTS)} labs: "
              f"{len(guests) - restored} guests booted, {restored} restored")
    if GUEST_CPU:
        terminalreporter.section("CPU per lab guest (QEMU's user + system, over its life)")
        labs: dict[str, list[tuple[str, float, float]]] = {}
        for lab_name, guest, cpu, lived in GUEST_CPU:
            labs.setdefault(lab_name, []).append((guest, cpu, lived))
        for lab_name, guests in labs.items():
            each = ", ".join(f"{g} {cpu / 60:.1f} ({lived / 60:.1f} min lived)"
                             for g, cpu, lived in guests)
            write(f"{sum(g[1] for g in guests) / 60:6.1f} CPU-min  {lab_name}: {each}")
        write(f"{sum(g[2] for g in GUEST_CPU) / 60:6.1f} CPU-min  every guest; "
              f"{sum(g[3] for g in GUEST_CPU) / 60:.0f} guest-minutes")
