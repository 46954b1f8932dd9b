"""The hub's watcher (keel fleet watch): each tick asks every edge, gives
those behind their routes the ones due (an edge that was down when another
paired catches up), writes the snapshot every tick and when each edge last
answered only when one comes or goes (or every 5 min); keel apply runs it on
a hub; pairing wakes it (SIGUSR1) instead of starting a sync."""

from __future__ import annotations

import subprocess
import sys
import time

from keel.apply.fleet import WATCH_ARGV, plan_fleet_watch
from keel.fleet import background, wire
from keel.fleet.hub import Edge, EdgeRow, Synced
from keel.fleet.watch import SEEN_EVERY_S, Watcher
from keel.model.from_config import model_from_config
from keel.pair import settle
from keel.pair.messages import EdgeOffer
from tests.unit.pair.conftest import EDGE_KEY, HUB_KEY, edge_config, hub_config


def status(routes: tuple[str, ...]) -> wire.Status:
    return wire.Status(name="edge-a", version="0.1.0", at=1.0, uptime_s=2.0, routes=routes)


class World:
    def __init__(self) -> None:
        self.rows: list[EdgeRow] = []
        self.given: list[set[str]] = []
        self.snapshots: list[dict] = []
        self.seen_kept: list[dict] = []
        self.said: list[str] = []
        self.now = 1000.0

    def watcher(self) -> Watcher:
        return Watcher(lambda seen: (self.rows, self.now), self.give, self.snapshots.append,
                       lambda seen: self.seen_kept.append(dict(seen)), self.said.append,
                       clock=lambda: self.now)

    def give(self, rows: list[EdgeRow]) -> list[Synced]:
        self.given.append({r.edge.name for r in rows})
        return [Synced(r.edge.name, r.routes_due) for r in rows]


A = Edge("edge-a", "10.77.0.2", "ka")
B = Edge("edge-b", "10.77.0.3", "kb")


def test_an_edge_behind_its_routes_is_given_them_and_one_in_sync_is_not() -> None:
    world = World()
    w = world.watcher()
    world.rows = [EdgeRow(A, status(()), routes_due=("192.168.78.0/24",)),
                  EdgeRow(B, status(("192.168.77.0/24",)), routes_due=("192.168.77.0/24",))]
    w.tick()
    assert world.given == [{"edge-a"}]
    assert any("edge-a: given its routes (192.168.78.0/24)" in line for line in world.said)
    # silent edges are not given anything (they cannot take it); in sync: nothing
    world.rows = [EdgeRow(A, None, "no answer in time", routes_due=("192.168.78.0/24",)),
                  EdgeRow(B, status(("192.168.77.0/24",)), routes_due=("192.168.77.0/24",))]
    w.tick()
    assert world.given == [{"edge-a"}] and len(world.snapshots) == 2


def test_when_each_edge_answered_is_kept_when_one_comes_or_goes_or_every_5_min() -> None:
    world = World()
    w = world.watcher()
    world.rows = [EdgeRow(A, status(()))]
    w.tick()
    assert len(world.seen_kept) == 1  # edge-a answers: kept
    world.now += 30
    w.tick()
    assert len(world.seen_kept) == 1  # nothing came or went
    world.rows = [EdgeRow(A, None, "no answer in time")]
    world.now += 30
    w.tick()
    assert len(world.seen_kept) == 2 and "edge-a does not answer" in world.said[-1]
    world.now += SEEN_EVERY_S
    w.tick()
    assert len(world.seen_kept) == 3


def test_apply_runs_the_watch_on_a_hub_and_not_on_an_edge(tmp_path) -> None:
    from tests.unit.apply.test_apply_plan import FakeProbe

    hub, grant = settle.hub_admit(hub_config(), EdgeOffer("edge-a", EDGE_KEY,
                                                          "192.168.77.0/24", "x"), HUB_KEY)
    probe = FakeProbe(tmp_path)
    steps = plan_fleet_watch(model_from_config(hub), probe)
    assert len(steps) == 1 and WATCH_ARGV[-2:] == ("fleet", "watch")
    assert WATCH_ARGV[-3:] == steps[0].commands[0][-3:]
    edge = model_from_config(settle.edge_join(edge_config(), grant, "203.0.113.2"))
    assert plan_fleet_watch(edge, probe) == []


def test_pairing_wakes_the_watcher_rather_than_starting_a_sync(tmp_path) -> None:
    """A process whose command line is the watcher's gets SIGUSR1."""
    woke = tmp_path / "woke"
    code = ("import signal, sys, time, pathlib; p = pathlib.Path(sys.argv[1]); "
            "signal.signal(signal.SIGUSR1, lambda *a: p.write_text('yes')); "
            "print('ready', flush=True); time.sleep(20)")
    proc = subprocess.Popen([sys.executable, "-c", code, str(woke), *WATCH_ARGV[1:]],
                            stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "ready"
        pidfile = tmp_path / "fleet-watch.pid"
        pidfile.write_text(f"{proc.pid}\n")
        background.sync_soon(pidfile)
        deadline = time.monotonic() + 10
        while not woke.exists() and time.monotonic() < deadline:
            time.sleep(0.02)
        assert woke.read_text() == "yes"
    finally:
        proc.kill()
        proc.wait()


def test_doctor_says_whether_a_hub_asks_its_edges() -> None:
    from keel.doctor.checks import FAIL, OK
    from keel.doctor.fleet import check_fleet_watch

    hub, grant = settle.hub_admit(hub_config(), EdgeOffer("edge-a", EDGE_KEY,
                                                          "192.168.77.0/24", "x"), HUB_KEY)
    assert check_fleet_watch(model_from_config(hub), True).status == OK
    assert check_fleet_watch(model_from_config(hub), False).status == FAIL
    edge = model_from_config(settle.edge_join(edge_config(), grant, "203.0.113.2"))
    assert check_fleet_watch(edge, False) is None


def test_the_daemons_logs_stay_under_their_bound(tmp_path) -> None:
    """A line every poll for months (an edge that stays down) keeps the log
    on /run (RAM) under its bound, the newest lines kept."""
    from keel.fleet.logfile import append

    log = tmp_path / "fleet-watch.log"
    for n in range(5000):
        append(log, f"keel fleet watch: edge-a does not answer ({n})", most=16 * 1024)
    assert log.stat().st_size <= 16 * 1024 + 200
    assert log.read_text().splitlines()[-1].endswith("(4999)")
