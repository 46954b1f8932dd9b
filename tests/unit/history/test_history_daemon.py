"""The history daemon: a point every interval, the newest on /run at once,
a batch a minute into the store (at once on SIGUSR1, and at the end), the
events of what changed, and a store that cannot be written does not stop it."""

from __future__ import annotations

import dataclasses
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from keel.history.daemon import BATCH_S, Daemon, Places, Router
from keel.history.sampler import Interval
from keel.history.store import HistoryStore
from keel.metrics.latest_point import read_latest
from keel.metrics.snapshots import LatencySnapshot, SeriesSnapshot
from keel.parse.ping import LatencySample
from tests.fixtures.sources import fixture_source

T0 = 1_795_000_000  # a multiple of 10


class Clock:
    def __init__(self, t: float) -> None:
        self.t = t

    def __call__(self) -> float:
        return self.t


class FakeRouter:
    """What the daemon reads, made up: 20 probes an interval through the tunnel."""

    def __init__(self) -> None:
        self.peer = ("10.99.0.2", None, None)
        self.names: dict[str, str] = {}
        self.follows = 0
        self.stopped = False

    def follow_peer(self) -> None:
        self.follows += 1

    def follow_config(self) -> None:
        pass

    def interval(self, t: int) -> Interval:
        samples = tuple(LatencySample(t - 10 + i / 2, 5.0 + i) for i in range(20))
        return Interval(t=t, latency=LatencySnapshot(t, (
            SeriesSnapshot("tunnel", "10.99.0.2", samples, 14.0, 5.0, 0.0),)))

    def stop(self) -> None:
        self.stopped = True


def daemon(tmp_path: Path, clock: Clock, store: Path | None = None) -> Daemon:
    places = Places(tmp_path / "revisions", tmp_path / "upgrade", tmp_path / "adapt.jsonl")
    return Daemon(store or tmp_path / "history.db", FakeRouter(), clock=clock,
                  say=lambda line: said.append(line), run_dir=tmp_path / "run", places=places)


said: list[str] = []


def test_points_every_interval_and_one_batch_every_batch_s(tmp_path):
    clock = Clock(T0)
    d = daemon(tmp_path, clock)
    d.start("test", "boot-1")
    n = BATCH_S // 10
    for i in range(1, n + 1):
        clock.t = T0 + 10 * i
        point = d.tick(T0 + 10 * i)
        assert point.latency["tunnel"].sent == 20
        latest = read_latest(tmp_path / "run" / "latest.json", now=clock.t)
        assert latest is not None and latest.point == point
        if i == n - 1:
            assert not (tmp_path / "history.db").exists() or not HistoryStore(
                tmp_path / "history.db").points(T0, T0 + BATCH_S)  # not yet
    with HistoryStore(tmp_path / "history.db") as store:  # one batch, at BATCH_S
        kept = store.points(T0, T0 + BATCH_S + 10)
        assert [p.t for p in kept] == [T0 + 10 * i for i in range(1, n + 1)]
        assert [e.kind for e in store.events(T0 - 10, T0 + BATCH_S)] == ["boot"]
    written = json.loads((tmp_path / "run" / "written.json").read_text())
    assert written["newest"] == T0 + BATCH_S


def test_the_same_boot_is_recorded_once(tmp_path):
    clock = Clock(T0)
    for _ in range(2):
        d = daemon(tmp_path, clock)
        d.start("test", "boot-1")
        d.flush()
    d = daemon(tmp_path, clock)
    d.start("test", "boot-2")
    d.flush()
    with HistoryStore(tmp_path / "history.db") as store:
        assert [e.kind for e in store.events(T0 - 10, T0 + 10)] == ["boot", "boot"]


def test_an_apply_is_an_event_and_the_peer_is_looked_for_again(tmp_path):
    clock = Clock(T0)
    d = daemon(tmp_path, clock)
    revs = tmp_path / "revisions"
    revs.mkdir()
    (revs / "current").write_text("1\n")
    d.start("test", "boot-1")
    clock.t += 10
    d.tick(T0 + 10)  # the first look notes revision 1
    follows = d.router.follows
    (revs / "0002.toml").write_text("")
    (revs / "0002.json").write_text(json.dumps({"note": "settings"}))
    (revs / "current").write_text("2\n")
    clock.t += 10
    d.tick(T0 + 20)
    assert [e.kind for e in d.events] == ["apply"]  # (the boot's written at once)
    assert d.router.follows == follows + 1


def test_a_store_that_cannot_be_written_does_not_stop_the_daemon(tmp_path):
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("")
    clock = Clock(T0)
    said.clear()
    d = daemon(tmp_path, clock, store=blocker / "history.db")
    d.start("test", "boot-1")
    for i in range(1, 2 * BATCH_S // 10 + 2):
        clock.t = T0 + 10 * i
        d.tick(T0 + 10 * i)
    assert read_latest(tmp_path / "run" / "latest.json", now=clock.t) is not None
    assert len([line for line in said if "not kept" in line]) == 1  # said once
    assert d.points  # kept in memory, for the next try


def test_run_ticks_on_the_clock_and_writes_what_is_left_at_the_end(tmp_path):
    clock = Clock(T0 + 9.5)
    d = daemon(tmp_path, clock)
    stop, wake = threading.Event(), threading.Event()

    def later() -> None:  # the wall clock moves on; then SIGTERM
        time.sleep(0.2)
        clock.t = T0 + 10.0
        time.sleep(0.8)
        stop.set()
        wake.set()

    threading.Thread(target=later).start()
    d.run(stop, wake)
    assert d.router.stopped
    with HistoryStore(tmp_path / "history.db") as store:
        assert [p.t for p in store.points(T0, T0 + 20)] == [T0 + 10]


def test_the_router_reads_the_lab_captures(tmp_path):
    """The real collectors on the lab's captured tc, wg and /proc reads: one
    interval gives CAKE, the tunnel and the CPU."""
    router = Router(fixture_source())
    router.interval(T0)  # the first read: rates need two
    iv = router.interval(T0 + 10)
    assert iv.cake is not None and iv.cake.directions
    assert iv.tunnel is not None and iv.tunnel.interfaces
    assert iv.cpu is not None and iv.cpu.cores


def test_sigusr1_writes_at_once_and_sigterm_ends_it(tmp_path):
    """The daemon as S42history runs it: a store is written on SIGUSR1
    without waiting for the minute, and SIGTERM ends it cleanly."""
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[3] / "tui")}
    proc = subprocess.Popen([sys.executable, "-m", "keel.history.daemon", "--store",
                             str(tmp_path / "h.db"), "--run-dir", str(tmp_path / "run")],
                            env=env, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while not (tmp_path / "h.db").exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        proc.send_signal(signal.SIGUSR1)  # the boot's event, written at once
        while time.monotonic() < deadline:
            with HistoryStore(tmp_path / "h.db") as store:
                if store.events(0, time.time() + 10):
                    break
            time.sleep(0.1)
        else:
            raise AssertionError("SIGUSR1 wrote nothing")
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(30) == 0, proc.stderr.read() if proc.stderr else ""
    finally:
        proc.kill()


def test_a_point_the_store_refuses_is_left_out_and_the_rest_kept(tmp_path):
    """A figure that is not a number (a collector's NaN) would refuse the
    whole batch at every try: that point is left out, said, the rest kept."""
    clock = Clock(T0)
    said.clear()
    d = daemon(tmp_path, clock)
    d.start("test", "boot-1")
    for i in range(1, 4):
        clock.t = T0 + 10 * i
        d.tick(T0 + 10 * i)
    d.points[1] = dataclasses.replace(d.points[1], stall_worst_ms=float("nan"))
    d.flush()
    assert d.points == [] and any("left out" in line for line in said)
    with HistoryStore(tmp_path / "history.db") as store:
        assert [p.t for p in store.points(T0, T0 + 40)] == [T0 + 10, T0 + 30]
