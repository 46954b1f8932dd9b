"""tests/lab/lanes.py: which lane runs what, the quiet blocks last, and each
lane's guests' nice value; tests/lab/priority.py: how a guest gets it."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from tests.lab import labs, lanes, priority
from tests.lab.marks import traits
from tests.lab.paths import LabError


def mod(name: str, *marks: pytest.MarkDecorator) -> SimpleNamespace:
    """A test module as lanes.py sees it: its name and its markers."""
    return SimpleNamespace(__name__=name, pytestmark=list(marks))


def item(module: SimpleNamespace, n: int) -> SimpleNamespace:
    where = "unit" if module.__name__ == "test_unit" else "vm"
    path = Path(f"/src/keel/tests/{where}/{module.__name__}.py")
    return SimpleNamespace(module=module, nodeid=f"{module.__name__}::t{n}", path=path)


LAB = pytest.mark.lab("bloated")
MEASURES = pytest.mark.measures
ALONE = pytest.mark.host_alone
HOST = mod("test_unit")
UPGRADE = mod("test_upgrade", pytest.mark.lab("upgrade"))
FIRST = mod("test_first_boot", LAB)
SELF = mod("test_selftest", LAB, MEASURES)
ADAPT = mod("test_adaptive", LAB, ALONE)
FORWARDS = mod("test_forwards", LAB)
CPU = mod("test_tunnel_cpu", pytest.mark.lab("tunnel"), MEASURES)
PAIR = mod("test_pairing", pytest.mark.lab("pairing"))
BOOT = mod("test_boot", pytest.mark.lab("image"))
ITEMS = [item(m, n) for m in (HOST, UPGRADE, FIRST, SELF, CPU, PAIR, BOOT) for n in range(2)]


def names(items) -> list[str]:
    return list(dict.fromkeys(i.module.__name__ for i in items))


def test_each_lane_runs_the_modules_of_its_labs_and_all_runs_every_one():
    quiet, other = lanes.select(ITEMS, "quiet")
    # the labs of the quiet lane: all their modules, measuring or not (first_boot)
    assert names(quiet) == ["test_first_boot", "test_selftest", "test_tunnel_cpu"]
    main, other = lanes.select(ITEMS, "main")
    assert names(main) == ["test_boot", "test_pairing"]  # the table's order (below)
    assert names(other) == ["test_unit", "test_upgrade", "test_first_boot", "test_selftest",
                            "test_tunnel_cpu"]
    side, _ = lanes.select(ITEMS, "side")
    assert names(side) == ["test_upgrade"]
    host, _ = lanes.select(ITEMS, "host")  # no guest: the host lane
    assert names(host) == ["test_unit"]
    assert lanes.select(ITEMS, "all") == (ITEMS, [])


def test_a_lab_lane_runs_its_labs_in_the_tables_order():
    items = [item(m, n) for m in (PAIR, HOST, BOOT) for n in range(2)]
    main, _ = lanes.select(items, "main")
    order = list(labs.TOPOLOGIES)
    assert order.index("image") < order.index("pairing")
    assert names(main) == ["test_boot", "test_pairing"]
    assert [i.nodeid for i in main][:2] == ["test_boot::t0", "test_boot::t1"]
    assert names(lanes.select(items, "all")[0]) == ["test_pairing", "test_unit", "test_boot"]


def test_every_item_has_one_lane():
    ran = [i for lane in lanes.LANES for i in lanes.select(ITEMS, lane)[0]]
    assert sorted(i.nodeid for i in ran) == sorted(i.nodeid for i in ITEMS)


def test_a_lab_test_that_names_no_lab_or_a_wrong_one_is_an_error_that_names_it():
    with pytest.raises(LabError, match="test_nolab: a lab test module names its lab"):
        lanes.select([item(mod("test_nolab"), 0)], "main")
    with pytest.raises(LabError, match=r"test_typo.*no lab named 'blaoted'.*known: restore"):
        lanes.select([item(mod("test_typo", pytest.mark.lab("blaoted")), 0)], "main")
    with pytest.raises(LabError, match=r"test_m: a module that measures .* 'image' \(the main"):
        lanes.select([item(mod("test_m", pytest.mark.lab("image"), MEASURES), 0)], "main")
    with pytest.raises(LabError, match="test_f: fresh= is for a shared lab"):
        lanes.select([item(mod("test_f", pytest.mark.lab("pairing", fresh=True)), 0)], "main")


def test_blocks_with_a_quiet_module_go_last_with_their_shared_lab():
    # (run as `pytest tests`, one process: --lane all)
    assert names(lanes.quiet_last(ITEMS)) == ["test_unit", "test_upgrade", "test_pairing",
                                              "test_boot", "test_first_boot",
                                              "test_selftest", "test_tunnel_cpu"]


def test_in_a_quiet_block_the_fresh_the_loud_the_quiet_then_the_alone_modules():
    block = [item(m, n) for m in (ADAPT, FORWARDS, SELF) for n in range(2)]
    fresh = mod("test_first_boot", pytest.mark.lab("bloated", fresh=True), MEASURES)
    block += [item(fresh, 0)]
    assert names(lanes.quiet_last(block)) == ["test_first_boot", "test_forwards",
                                              "test_selftest", "test_adaptive"]


def test_a_block_that_needs_the_host_alone_goes_after_the_quiet_ones():
    items = [item(m, n) for m in (ADAPT, SELF, CPU, PAIR) for n in range(2)]
    assert names(lanes.quiet_last(items)) == ["test_pairing", "test_tunnel_cpu",
                                              "test_selftest", "test_adaptive"]
    quiet, _ = lanes.select(items, "quiet")  # alone implies the quiet lane
    assert names(quiet) == ["test_adaptive", "test_selftest", "test_tunnel_cpu"]


def test_the_wait_ends_when_the_runner_lets_go(tmp_path, monkeypatch):
    import fcntl
    import threading

    monkeypatch.setattr(lanes, "LOCK", tmp_path / "lanes.lock")
    monkeypatch.setattr(lanes, "WANTED", tmp_path / "host-wanted")
    said: list[str] = []
    assert lanes.wait_for_other_lanes(said.append) < 1 and said == []  # no runner
    assert not lanes.WANTED.exists()
    asked = []
    with lanes.LOCK.open("a") as held:
        fcntl.flock(held, fcntl.LOCK_EX)

        def runner() -> None:  # sees the request, then lets go
            asked.append(lanes.WANTED.exists())
            fcntl.flock(held, fcntl.LOCK_UN)

        threading.Timer(0.3, runner).start()
        began = time.monotonic()
        lanes.wait_for_other_lanes(said.append)
        assert time.monotonic() - began >= 0.25
    assert asked == [True] and not lanes.WANTED.exists()
    assert said and "waiting for the host" in said[0]


def test_a_module_that_saturates_the_host_waits_until_the_others_have_ended(tmp_path,
                                                                             monkeypatch):
    """Stepped aside is not enough for it: it waits on ENDED (the runner lets
    go of it once the side and main lanes have ended) and asks for no idle
    group."""
    import fcntl
    import threading

    monkeypatch.setattr(lanes, "LOCK", tmp_path / "lanes.lock")
    monkeypatch.setattr(lanes, "ENDED", tmp_path / "lanes-ended.lock")
    monkeypatch.setattr(lanes, "WANTED", tmp_path / "host-wanted")
    asked = []
    with lanes.ENDED.open("a") as held:
        fcntl.flock(held, fcntl.LOCK_EX)

        def runner() -> None:
            asked.append(lanes.WANTED.exists())
            fcntl.flock(held, fcntl.LOCK_UN)

        threading.Timer(0.3, runner).start()
        began = time.monotonic()
        lanes.wait_for_other_lanes(lambda _: None, ended=True)
        assert time.monotonic() - began >= 0.25
    assert asked == [False]


def test_the_quiet_lanes_guests_come_first_once_booted_and_the_host_lane_sets_none():
    assert lanes.GUEST_NICE["quiet"] == 0
    assert all(lanes.GUEST_NICE[lane] > 0 for lane in (*lanes.SIDE_LANES, "main"))
    # while booting, every lab lane's guests alike: no boot starves another's
    assert set(lanes.BOOT_NICE.values()) == {lanes.BACKGROUND_NICE}
    env = lanes.lane_env("quiet", {})
    assert priority.lane_nice(env) == 0 and priority.boot_nice(env) == lanes.BACKGROUND_NICE
    env = lanes.lane_env("main", {})
    assert priority.lane_nice(env) == priority.boot_nice(env) == lanes.GUEST_NICE["main"]
    assert priority.NICE_ENV not in lanes.lane_env("host", {})


@pytest.mark.parametrize(("text", "nice"), [(None, 0), ("0", 0), ("10", 10), ("19", 19)])
def test_a_lanes_nice_value_is_read_from_its_environment(text, nice):
    env = {} if text is None else {priority.NICE_ENV: text}
    assert priority.lane_nice(env) == nice
    assert priority.boot_nice(env) == nice  # none given for the boot: the same
    assert priority.boot_nice({**env, priority.BOOT_NICE_ENV: "7"}) == 7


@pytest.mark.parametrize("text", ["-1", "20", "ten", "", "1.5"])
def test_a_nice_value_out_of_range_is_an_error_that_names_it(text):
    with pytest.raises(ValueError, match=priority.NICE_ENV):
        priority.lane_nice({priority.NICE_ENV: text})
    with pytest.raises(ValueError, match=priority.BOOT_NICE_ENV):
        priority.boot_nice({priority.BOOT_NICE_ENV: text})


def test_a_niced_process_and_its_session_run_at_that_value():
    """The real thing: a process started as a guest is (nice -n, then its own
    session's autogroup, where the kernel has them) runs at the nice value."""
    argv = priority.niced(["sleep", "30"], 7)
    proc = subprocess.Popen(argv, start_new_session=True)  # as pexpect starts QEMU
    try:
        deadline = time.monotonic() + 10
        while Path(f"/proc/{proc.pid}/comm").read_text().strip() != "sleep":
            assert time.monotonic() < deadline
            time.sleep(0.01)
        assert os.getpriority(os.PRIO_PROCESS, proc.pid) == 7
        group = Path(f"/proc/{proc.pid}/autogroup")
        if priority.set_session_nice(proc.pid, 7):
            assert group.read_text().split()[-1] == "7"
        else:
            assert not group.exists() or not os.access(group, os.W_OK)
    finally:
        proc.kill()
        proc.wait()
    assert priority.niced(["qemu"], 0) == ["qemu"]
    assert not priority.set_session_nice(proc.pid, 0)


def test_the_real_lab_modules_name_their_labs_by_markers_only():
    """tests/vm as it is: every module names a lab of tests/lab/labs.py by a
    marker (no module attribute says how it is run any more), and where each
    lab lane's labs are."""
    import importlib

    vm = Path(__file__).resolve().parents[1] / "vm"
    modules = [importlib.import_module(f"tests.vm.{p.stem}") for p in sorted(vm.glob("test_*.py"))]
    old = ("SHARED_LAB", "SHARED_LAB_FRESH", "QUIET_HOST", "HOST_ALONE", "LANE", "SET_UP_FIRST")
    assert [(m.__name__, a) for m in modules for a in old if hasattr(m, a)] == []
    items = [SimpleNamespace(module=m, nodeid=m.__name__, path=Path(m.__file__)) for m in modules]
    lane_of = {m.__name__.rsplit(".", 1)[-1]: lanes.lane_of_item(i)
               for m, i in zip(modules, items, strict=True)}
    assert set(lane_of.values()) <= set(lanes.LANES) - {"host"}, lane_of
    # the upgrade lab alone beside the host tests; the image lab (the
    # hardware matrix) and pairing in the main lane; the router lab in the
    # quiet lane, before its quiet lab
    assert [m for m, lane in lane_of.items() if lane == "side"] == ["test_upgrade"]
    assert {lane_of[m] for m in ("test_boot", "test_data", "test_hardware",
                                 "test_pairing")} == {"main"}
    assert {lane_of[m] for m in ("test_router", "test_ui_console", "test_adaptive")} == {"quiet"}
    quiet = names(lanes.quiet_last([i for i in items if lane_of[i.nodeid.rsplit(".", 1)[-1]]
                                    == "quiet"]))
    assert quiet.index("tests.vm.test_ui_console") < quiet.index("tests.vm.test_first_boot")
    # the module whose guests saturate the host (it waits for the other lanes
    # to end) comes after those that need them only stepped aside
    saturating = [m.__name__ for m in modules if traits(m).saturates]
    assert saturating == ["tests.vm.test_tunnel_cpu"] and quiet[-1] == saturating[0]
    # every lab of the table is used by some module, and only shared labs by several
    used: dict[str, set[str]] = {}
    for m in modules:
        if (lab := traits(m).lab) is not None:
            used.setdefault(lab.name, set()).add(m.__name__)
    assert set(used) == set(labs.TOPOLOGIES)
    assert all(labs.TOPOLOGIES[name].shared or len(ms) == 1 for name, ms in used.items())


def test_the_labs_of_the_later_alone_modules_can_boot_while_the_first_waits():
    """The first host_alone module waits for the host to itself: the labs of
    the alone modules after it (the first module of each) may boot
    meanwhile; its own lab, those of the modules before it (done with), and
    labs only other modules use, are left alone."""
    tunnel = pytest.mark.lab("tunnel")
    starving = mod("test_starving", LAB, ALONE)
    cpu = mod("test_tunnel_cpu", tunnel, ALONE)
    cpu_again = mod("test_tunnel_cpu_again", tunnel, ALONE)
    items = [item(m, n) for m in (FIRST, SELF, ADAPT, starving, cpu, cpu_again, PAIR)
             for n in range(2)]
    assert lanes.alone_labs(items, ADAPT) == [cpu]
    assert lanes.alone_labs(items, starving) == [cpu]
    assert lanes.alone_labs(items, cpu) == []
    assert lanes.alone_labs([item(m, 0) for m in (FIRST, SELF, PAIR)], ADAPT) == []
