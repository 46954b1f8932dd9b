"""tests/lab/lanes.py: which lane runs what, the quiet modules last, and the
wait for the host and side lanes."""

from __future__ import annotations

import fcntl
import threading
import time
from pathlib import Path
from types import SimpleNamespace

from tests.lab import lanes


def mod(name: str, **attrs) -> SimpleNamespace:
    return SimpleNamespace(__name__=name, **attrs)


def item(module: SimpleNamespace, n: int) -> SimpleNamespace:
    where = "unit" if module.__name__ == "test_unit" else "vm"
    path = Path(f"/src/keel/tests/{where}/{module.__name__}.py")
    return SimpleNamespace(module=module, nodeid=f"{module.__name__}::t{n}", path=path)


SHARED = SimpleNamespace(__name__="bloated_lab")
HOST = mod("test_unit")
UPGRADE = mod("test_upgrade", LANE="side")
FIRST = mod("test_first_boot", SHARED_LAB=SHARED)
SELF = mod("test_selftest", SHARED_LAB=SHARED, QUIET_HOST=True)
ADAPT = mod("test_adaptive", SHARED_LAB=SHARED, QUIET_HOST=True)
FORWARDS = mod("test_forwards", SHARED_LAB=SHARED)
CPU = mod("test_tunnel_cpu", QUIET_HOST=True)
PAIR = mod("test_pairing")
KEYS = mod("test_keystrokes", LANE="other", SHARED_LAB=SHARED, SHARED_LAB_FRESH=True)
ITEMS = [item(m, n) for m in (HOST, UPGRADE, FIRST, SELF, CPU, PAIR, KEYS) for n in range(2)]


def names(items) -> list[str]:
    return list(dict.fromkeys(i.module.__name__ for i in items))


def test_each_lane_runs_its_own_modules_and_all_runs_every_one():
    main, other = lanes.select(ITEMS, "main")
    assert names(main) == ["test_first_boot", "test_selftest", "test_tunnel_cpu",
                           "test_pairing"]
    assert names(other) == ["test_unit", "test_upgrade", "test_keystrokes"]
    side, _ = lanes.select(ITEMS, "side")
    assert names(side) == ["test_upgrade"]
    other_lane, _ = lanes.select(ITEMS, "other")  # a lane of its own per name
    assert names(other_lane) == ["test_keystrokes"]
    host, _ = lanes.select(ITEMS, "host")  # no guest: the host lane, whatever LANE says
    assert names(host) == ["test_unit"]
    assert lanes.select(ITEMS, "all") == (ITEMS, [])


def test_blocks_with_a_quiet_module_go_last_with_their_shared_lab():
    main, _ = lanes.select(ITEMS, "main")
    assert names(lanes.quiet_last(main)) == ["test_pairing", "test_first_boot",
                                             "test_selftest", "test_tunnel_cpu"]


def test_in_a_quiet_block_the_fresh_then_the_loud_modules_come_first():
    block = [item(m, n) for m in (ADAPT, FORWARDS, SELF) for n in range(2)]
    fresh = mod("test_first_boot", SHARED_LAB=SHARED, SHARED_LAB_FRESH=True, QUIET_HOST=True)
    block += [item(fresh, 0)]
    assert names(lanes.quiet_last(block)) == ["test_first_boot", "test_forwards",
                                              "test_adaptive", "test_selftest"]


def test_the_wait_ends_when_the_side_lanes_runner_lets_go(tmp_path, monkeypatch):
    monkeypatch.setattr(lanes, "LOCK", tmp_path / "side-lane.lock")
    said: list[str] = []
    assert lanes.wait_for_side_lane(said.append) < 1 and said == []  # no side lane
    with lanes.LOCK.open("a") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        threading.Timer(0.3, lambda: fcntl.flock(held, fcntl.LOCK_UN)).start()
        began = time.monotonic()
        lanes.wait_for_side_lane(said.append)
        assert time.monotonic() - began >= 0.25
    assert said and "waiting for the host and side lanes" in said[0]
