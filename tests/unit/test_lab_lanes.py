"""tests/lab/lanes.py: which lane runs what, the quiet modules last, and the
wait for the side lane."""

from __future__ import annotations

import fcntl
import threading
import time
from types import SimpleNamespace

from tests.lab import lanes


def mod(name: str, **attrs) -> SimpleNamespace:
    return SimpleNamespace(__name__=name, **attrs)


def item(module: SimpleNamespace, n: int) -> SimpleNamespace:
    return SimpleNamespace(module=module, nodeid=f"{module.__name__}::t{n}")


SHARED = SimpleNamespace(__name__="bloated_lab")
HOST = mod("test_unit")
UPGRADE = mod("test_upgrade", LANE="side")
FIRST = mod("test_first_boot", SHARED_LAB=SHARED)
SELF = mod("test_selftest", SHARED_LAB=SHARED, QUIET_HOST=True)
CPU = mod("test_tunnel_cpu", QUIET_HOST=True)
PAIR = mod("test_pairing")
ITEMS = [item(m, n) for m in (HOST, UPGRADE, FIRST, SELF, CPU, PAIR) for n in range(2)]


def names(items) -> list[str]:
    return list(dict.fromkeys(i.module.__name__ for i in items))


def test_each_lane_runs_its_own_modules_and_all_runs_every_one():
    main, other = lanes.select(ITEMS, "main")
    assert names(main) == ["test_unit", "test_first_boot", "test_selftest",
                           "test_tunnel_cpu", "test_pairing"]
    assert names(other) == ["test_upgrade"]
    side, _ = lanes.select(ITEMS, "side")
    assert names(side) == ["test_upgrade"]
    assert lanes.select(ITEMS, "all") == (ITEMS, [])


def test_blocks_with_a_quiet_module_go_last_with_their_shared_lab():
    main, _ = lanes.select(ITEMS, "main")
    assert names(lanes.quiet_last(main)) == ["test_unit", "test_pairing", "test_first_boot",
                                             "test_selftest", "test_tunnel_cpu"]


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
    assert said and "waiting for the side lane" in said[0]
