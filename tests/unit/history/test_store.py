"""keel.history.store: the history on /data in SQLite: batches written whole,
rollups and retention per tier, a bounded size, a power cut mid-batch, a store
from a newer keel, a corrupt file moved aside, and rows that never make a read
fail."""

from __future__ import annotations

import contextlib
import json
import os
import random
import re
import signal
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from keel.history import store as store_mod
from keel.history.point import (
    MAX_CAUSE,
    MAX_CAUSES,
    MAX_EVIDENCE,
    PATHS,
    WAYS,
    Cake,
    Core,
    Event,
    Latency,
    Point,
    kept,
    rollup,
)
from keel.history.store import (
    MAX_EVENT_BYTES,
    MAX_POINT_BYTES,
    SCHEMA,
    SIZE_BOUND,
    TIERS,
    HistoryStore,
    StoreError,
)

TUI = Path(__file__).resolve().parents[3] / "tui"
DAY = 86_400
T0 = 1_700_000_400  # a multiple of 600: minutes and ten minutes start on it


def point(t: int, *, cores: int = 2) -> Point:
    """A 10-s point whose figures vary with t, so a rollup's aggregates show
    (at the precision the history keeps: point.kept)."""
    return kept(_point(t, cores=cores))


def _point(t: int, *, cores: int = 2) -> Point:
    k = (t // 10) % 97
    if cores == 0:  # a light one, quick to make, store and roll up
        return Point(t=t, wan_rx_bps=1e6 * k, stall_worst_ms=0.1 * k,
                     causes={"cpu": 10} if k % 11 == 0 else {})
    return Point(
        t=t,
        latency={"tunnel": Latency(p50_ms=10.0 + k, p95_ms=20.0 + k % 13, max_ms=30.0 + k,
                                   loss=(k % 5) / 50, sent=50),
                 "outside": Latency(p50_ms=5.0 + k % 7, p95_ms=None, max_ms=9.5, loss=None,
                                    sent=0)},
        wan_rx_bps=1e6 * k, wan_tx_bps=None if k % 3 else 2.5e5,
        cake={"up": Cake(rate_kbit=20_000 + k, throughput_bps=1e5 * k, drops=k % 4, marks=1,
                         backlog_bytes=100 * k, adaptive=k % 2 == 0)},
        cores=tuple(Core(user=0.01 * ((k + i) % 30), system=0.02, softirq=0.001 * k)
                    for i in range(cores)),
        stall_worst_ms=0.1 * k,
        causes={"bufferbloat_up": 10, "cpu": k % 10} if k % 11 == 0 else {},
        evidence=f"queue {k} ms" if k % 11 == 0 else "")


def largest_point(t: int, seconds: int = 10) -> Point:
    """The largest point a router writes: 2 paths, 2 ways, 16 cores, 8 causes
    of 40 characters, 300 of evidence, every figure at the precision kept."""
    lat = Latency(p50_ms=123.45678901234568, p95_ms=1234.5678901234568,
                  max_ms=12345.678901234567, loss=0.012345678901234568, sent=6000)
    cake = Cake(rate_kbit=1_000_000, throughput_bps=1234567890.1234567, drops=123_456_789,
                marks=123_456_789, backlog_bytes=12_345_678, adaptive=True)
    core = Core(0.12345678901234568, 0.12345678901234568, 0.12345678901234568,
                0.012345678901234568)
    return kept(Point(
        t=t, seconds=seconds, latency=dict.fromkeys(PATHS, lat),
        wan_rx_bps=1234567890.1234567, wan_tx_bps=1234567890.1234567,
        tunnel_rx_bps=1234567890.1234567, tunnel_tx_bps=1234567890.1234567,
        cake=dict.fromkeys(WAYS, cake), cores=(core,) * 16, stall_worst_ms=12345.678901234567,
        tunnel_cpu_cores=12.345678901234567,
        causes={f"{i}".ljust(MAX_CAUSE, "x"): seconds for i in range(MAX_CAUSES)},
        evidence="e" * MAX_EVIDENCE))


def batches(start: int, end: int, size: int = 6, cores: int = 2) -> list[list[Point]]:
    """The 10-s points ending in (start, end], in batches of `size`."""
    ts = list(range(start + 10, end + 1, 10))
    return [[point(t, cores=cores) for t in ts[i:i + size]] for i in range(0, len(ts), size)]


@pytest.fixture
def no_fsync(monkeypatch):
    """Commits not waited onto the disk: for the tests of many batches, none
    of which cuts the power (the kill tests keep SYNCHRONOUS=FULL)."""
    monkeypatch.setattr(store_mod, "SYNCHRONOUS", "OFF")


class Clock:
    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


@contextlib.contextmanager
def raw(path: Path) -> Iterator[sqlite3.Connection]:
    """A connection of the test's own, beside the store's, closed after."""
    db = sqlite3.connect(path, isolation_level=None)
    try:
        yield db
    finally:
        db.close()


def times(path: Path, tier: int) -> list[int]:
    with raw(path) as db:
        return [t for (t,) in db.execute("SELECT t FROM points WHERE tier = ? ORDER BY t",
                                         (tier,))]


def stored(path: Path, tier: int) -> dict[int, Point]:
    with raw(path) as db:
        return {t: Point.from_json(json.loads(data)) for t, data in
                db.execute("SELECT t, data FROM points WHERE tier = ?", (tier,))}


def test_a_batch_reads_back_with_its_rollups_and_events(tmp_path):
    path = tmp_path / "data" / "keel" / "history.db"  # the directory is made
    store = HistoryStore(path, clock=Clock(T0))
    assert store.opened_note is None
    pts = [point(T0 + 10 * i) for i in range(1, 7)]
    boot = Event(T0 + 5, "boot", "keel 1.2 booted", {"slot": "A"})
    rate = Event(T0 + 31.5, "rate_change", "up 20000 -> 18000 kbit", {"to": 18000})
    store.write_batch(pts, [rate, boot])
    assert store.points(T0, T0 + 60) == pts
    assert store.skipped == 0
    assert store.latest() == pts[-1]
    assert store.points(T0, T0 + 60, seconds=60) == [rollup(pts, t=T0 + 60, seconds=60)]
    assert store.points(T0, T0 + 600, seconds=600) == [rollup(
        [rollup(pts, t=T0 + 60, seconds=60)], t=T0 + 600, seconds=600)]
    assert store.events(T0, T0 + 60) == [boot, rate]  # in time order
    assert store.events(T0, T0 + 60, kinds=["rate_change"]) == [rate]
    assert store.events(T0, T0 + 60, kinds="boot") == [boot]
    assert store.events(T0 + 6, T0 + 31) == []
    with raw(path) as db:
        assert db.execute("PRAGMA user_version").fetchone() == (SCHEMA,)
        assert db.execute("PRAGMA journal_mode").fetchone() == ("wal",)
        data = db.execute("SELECT data FROM points WHERE tier = 0 LIMIT 1").fetchone()[0]
    assert store_mod.SYNCHRONOUS == "FULL"
    assert ", " not in data and ": " not in data and "null" not in data  # compact
    store.close()
    with HistoryStore(path) as again:
        assert again.points(T0, T0 + 60) == pts


def test_a_rewritten_point_and_an_interval_in_progress_are_replaced(tmp_path):
    store = HistoryStore(tmp_path / "h.db")
    first, second = [point(T0 + 10), point(T0 + 20)], [point(T0 + 30)]
    store.write_batch(first, [])
    store.write_batch(second, [])
    assert store.points(T0, T0 + 60, seconds=60) == [rollup(first + second, T0 + 60, 60)]
    again = Point(t=T0 + 20, wan_rx_bps=1.0)
    store.write_batch([again], [])
    assert store.points(T0, T0 + 60) == [first[0], again, second[0]]
    assert store.points(T0, T0 + 60, seconds=60) == [rollup([first[0], again, second[0]],
                                                           T0 + 60, 60)]


def test_the_tier_read_is_the_finest_that_reaches_back(tmp_path):
    now = T0 + 40 * DAY  # the newest 10-s point: the tiers' ages count back from it
    store = HistoryStore(tmp_path / "h.db", clock=Clock(now + 99 * DAY))
    with raw(store.path) as db:
        for tier, t in ((0, now), (1, now - DAY), (2, now - 100 * DAY)):
            db.execute("INSERT INTO points VALUES (?, ?, ?)", (
                tier, t, json.dumps(Point(t=t, seconds=TIERS[tier].seconds).as_json())))
    assert [p.seconds for p in store.points(now - 2 * DAY, now)] == [10]
    assert [p.seconds for p in store.points(now - 2 * DAY - 1, now)] == [60]
    assert [p.seconds for p in store.points(now - 30 * DAY, now)] == [60]
    assert [p.seconds for p in store.points(now - 400 * DAY, now)] == [600]
    assert store.points(now - 30 * DAY - 1, now) == []  # tier 2 holds nothing then
    assert [p.t for p in store.points(0, now, seconds=60)] == [now - DAY]
    with pytest.raises(ValueError, match="no tier of 30 s"):
        store.points(0, now, seconds=30)
    with pytest.raises(ValueError, match="since is not a time"):
        store.points("yesterday", now)  # type: ignore[arg-type]


def test_bad_input_names_what_and_writes_nothing_of_the_batch(tmp_path):
    store = HistoryStore(tmp_path / "h.db")
    good = point(T0 + 10)
    bad = [Point(t=T0 + 15), Point(t=T0 + 20, seconds=60),
           Point(t=T0 + 20, wan_rx_bps=float("nan")),
           Point(t=T0 + 20, wan_rx_bps="fast")]  # type: ignore[arg-type]
    for p in bad:
        with pytest.raises(ValueError, match=f"history point t={p.t}"):
            store.write_batch([good, p], [])
    with pytest.raises(ValueError, match="event 'boot' at t="):
        store.write_batch([good], [Event(T0, "boot", "up", {"when": object()})])
    with pytest.raises(ValueError, match="bytes of JSON"):
        store.write_batch([good], [Event(T0, "boot", "x" * MAX_EVENT_BYTES)])
    with pytest.raises(ValueError, match="not a finite number"):
        store.write_batch([good], [Event(float("inf"), "boot", "up")])
    assert store.points(0, T0 * 2) == [] and store.events(0, T0 * 2) == []


@pytest.mark.usefixtures("no_fsync")
def test_dense_days_keep_two_days_of_points_and_every_rollup(tmp_path):
    """Two days and three hours of 10-s points: the last three hours in
    batches of 6 as the daemon writes them (the days before light points in
    hourly batches, to be quick). Tier 0 keeps exactly 2 days; each 1-min and
    10-min row is the rollup of the points it covers."""
    end = T0 + 2 * DAY + 3 * 3600
    clock = Clock(T0)
    store = HistoryStore(tmp_path / "h.db", clock=clock)
    written: dict[int, Point] = {}
    cut = T0 + 2 * DAY
    for batch in batches(T0, cut, size=360, cores=0) + batches(cut, end):
        clock.now = batch[-1].t
        store.write_batch(batch, [])
        written.update((p.t, p) for p in batch)
    assert times(store.path, 0) == list(range(end - 2 * DAY + 10, end + 1, 10))  # 17,280
    minutes = stored(store.path, 1)
    assert sorted(minutes) == list(range(T0 + 60, end + 1, 60))
    for m, got in minutes.items():
        assert got == rollup([written[t] for t in range(m - 50, m + 1, 10)], t=m, seconds=60)
    tens = stored(store.path, 2)
    assert sorted(tens) == list(range(T0 + 600, end + 1, 600))
    for m, got in tens.items():
        assert got == rollup([minutes[t] for t in range(m - 540, m + 1, 60)], t=m, seconds=600)
    # a read picks the tier: the last day from tier 0, the whole span from tier 1
    assert len(store.points(end - DAY, end)) == DAY // 10 + 1
    assert store.points(T0, end)[0] == minutes[T0 + 60]


@pytest.mark.usefixtures("no_fsync")
def test_a_sparse_year_keeps_each_tier_within_its_retention(tmp_path, monkeypatch):
    """A minute of points every 11 hours for 400 days, and an event each time:
    every tier's oldest row is within its retention of the newest point, and
    no tier holds more than the batches of its span wrote."""
    monkeypatch.setattr(store_mod, "MAX_EVENTS", 500)
    clock = Clock(T0)
    store = HistoryStore(tmp_path / "h.db", clock=clock)
    step = 11 * 3600
    start = T0
    while start < T0 + 400 * DAY:
        clock.now = start + 60
        store.write_batch(batches(start, start + 60)[0], [Event(start + 1, "boot", "up")])
        start += step
    newest = clock.now
    for tier, spec in enumerate(TIERS):
        ts = times(store.path, tier)
        assert ts[-1] == newest if tier < 2 else ts[-1] - newest < 600
        assert ts[0] > newest - spec.keep
        assert ts[0] <= newest - spec.keep + step + 600  # nothing younger was dropped
        per_batch = {0: 6, 1: 1, 2: 1}[tier]
        assert len(ts) <= per_batch * (spec.keep // step + 1)
    events = store.events(0, newest)
    assert len(events) == 500  # MAX_EVENTS: the oldest went
    assert events[-1].t == newest - 59 and events[0].t > newest - 365 * DAY
    store.write_batch([], [])  # no points: retention at the clock
    clock.now = newest + 3 * DAY
    store.write_batch([], [])
    assert times(store.path, 0) == []
    assert times(store.path, 1) != []


def test_the_largest_point_fits_its_bound(tmp_path):
    store = HistoryStore(tmp_path / "h.db")
    store.write_batch([largest_point(T0 + 10 * i) for i in range(1, 7)], [])
    assert store.points(T0, T0 + 60) == [largest_point(T0 + 10 * i) for i in range(1, 7)]
    with raw(store.path) as db:
        sizes = dict(db.execute("SELECT tier, MAX(LENGTH(CAST(data AS BLOB))) FROM points"
                                " GROUP BY tier"))
    assert max(sizes.values()) <= MAX_POINT_BYTES
    assert max(sizes.values()) > MAX_POINT_BYTES * 0.9  # the bound is not loose


@pytest.mark.usefixtures("no_fsync")
def test_a_full_store_of_the_largest_points_stays_under_the_size_bound(tmp_path):
    """Every tier at full density (113,040 rows) of the largest point, written
    in time order as the tiers interleave, and MAX_EVENTS of the largest
    events: the file stays under SIZE_BOUND, and the store still works."""
    path = tmp_path / "h.db"
    now = T0 + 400 * DAY
    HistoryStore(path).close()
    with raw(path) as db:  # no journal for the fill: half the writing
        assert db.execute("PRAGMA journal_mode=OFF").fetchone() == ("off",)
    rows = sorted((t, tier) for tier, spec in enumerate(TIERS)
                  for t in range(now - spec.keep + spec.seconds, now + 1, spec.seconds))
    assert len(rows) == 2 * DAY // 10 + 30 * DAY // 60 + 365 * DAY // 600 == 113_040
    texts = [json.dumps(largest_point(now, s.seconds).as_stored(), separators=(",", ":"))
             for s in TIERS]
    stamp = str(now)
    event = json.dumps(Event(0.0, "apply", "").as_json(), separators=(",", ":"))
    event = event.replace('"text":""', '"text":"' + "w" * (MAX_EVENT_BYTES - len(event)) + '"')
    try:
        with raw(path) as db:
            db.execute("PRAGMA synchronous=OFF")
            db.execute("BEGIN")
            db.executemany("INSERT INTO points VALUES (?, ?, ?)", (
                (tier, t, texts[tier].replace(stamp, str(t), 1)) for t, tier in rows))
            db.executemany("INSERT INTO events VALUES (?, 'apply', ?)", (
                (now - i, event) for i in range(store_mod.MAX_EVENTS)))
            db.execute("COMMIT")
        store = HistoryStore(path, clock=Clock(now))
        assert store.size_bytes() <= SIZE_BOUND
        store.write_batch([largest_point(now + 10)], [Event(now + 1, "boot", "up")])
        assert [p.t for p in store.points(now - 50, now + 10, seconds=10)] == list(
            range(now - 50, now + 11, 10))
        assert times(path, 0)[0] == now - 2 * DAY + 20  # retention at the new point
        assert store.size_bytes() <= SIZE_BOUND
        store.close()
    finally:
        for f in tmp_path.glob("h.db*"):
            f.unlink()  # half a gigabyte: not left for pytest's kept temp dirs


@pytest.mark.usefixtures("no_fsync")
def test_vacuum_runs_when_a_quarter_of_the_file_is_free(tmp_path):
    store = HistoryStore(tmp_path / "h.db")
    for batch in batches(T0, T0 + 3600, size=60):
        store.write_batch(batch, [])
    assert store.vacuum_if_needed() is False
    with raw(store.path) as db:
        db.execute("DELETE FROM points WHERE tier = 0 AND t < ?", (T0 + 3000,))
    before = store.size_bytes()
    assert store.vacuum_if_needed() is True
    assert store.size_bytes() < before / 2
    assert store.vacuum_if_needed() is False
    assert len(store.points(T0 + 3000, T0 + 3600, seconds=10)) == 61


# --- a power cut mid-batch --------------------------------------------------------

CHILD = """
import sys, time
from keel.history import store as s
from keel.history.point import Point

path, mode = sys.argv[1], sys.argv[2]
st = s.HistoryStore(path)
T0 = {t0}
def batch(i, n=6):
    return [Point(t=T0 + 10 * (i * n + j + 1), wan_rx_bps=float(i), evidence="x" * 900)
            for j in range(n)]
if mode == "stuck":
    for i in range(5):
        st.write_batch(batch(i), [])
    def stuck(*args, **kwargs):  # the big batch's points are written, not committed
        print("ready", flush=True)
        time.sleep(60)
    s.rollup = stuck
    st.write_batch(batch(1, n=5000), [])  # points 5000 on: its own times
else:
    i = 0
    while True:
        st.write_batch(batch(i), [])
        print(i, flush=True)
        i += 1
"""


def run_child(path: Path, mode: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", CHILD.format(t0=T0), str(path), mode],
        env={**os.environ, "PYTHONPATH": str(TUI)}, stdout=subprocess.PIPE, text=True)


def kill_after(proc: subprocess.Popen[str], lines: int) -> list[str]:
    """SIGKILL the child once it printed `lines` lines; every line it printed."""
    got: list[str] = []
    try:
        assert proc.stdout is not None
        while len(got) < lines:
            line = proc.stdout.readline()
            assert line, "the child ended early"
            got.append(line.strip())
        proc.send_signal(signal.SIGKILL)
        got += proc.stdout.read().split()
        proc.wait(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return got


def assert_sound(path: Path) -> HistoryStore:
    store = HistoryStore(path)
    assert store.opened_note is None
    with raw(path) as db:
        assert db.execute("PRAGMA quick_check").fetchall() == [("ok",)]
    return store


def test_a_batch_torn_by_a_power_cut_is_wholly_absent(tmp_path):
    """The child is killed inside its sixth write_batch, after that batch's
    5,000 points went to the WAL uncommitted (more than the page cache holds)."""
    path = tmp_path / "h.db"
    kill_after(run_child(path, "stuck"), 1)
    assert Path(f"{path}-wal").stat().st_size > 2_000_000  # the torn batch hit the disk
    store = assert_sound(path)
    got = store.points(0, T0 * 2, seconds=10)
    assert [p.t for p in got] == [T0 + 10 * k for k in range(1, 31)]
    assert [p.wan_rx_bps for p in got] == [float(k // 6) for k in range(30)]


def test_a_batch_killed_at_any_moment_is_whole_or_absent(tmp_path):
    path = tmp_path / "h.db"
    done = kill_after(run_child(path, "loop"), random.Random().randrange(5, 40))
    store = assert_sound(path)
    got = store.points(0, T0 * 2, seconds=10)
    whole = len(got) // 6
    assert len(got) % 6 == 0 and whole in (len(done), len(done) + 1)
    assert [p.t for p in got] == [T0 + 10 * k for k in range(1, len(got) + 1)]
    assert len(store.points(0, T0 * 2, seconds=60)) == whole  # each batch its minute


# --- versions ---------------------------------------------------------------------


def test_a_newer_store_is_read_and_written(tmp_path):
    path = tmp_path / "h.db"
    store = HistoryStore(path)
    store.write_batch([point(T0 + 10)], [])
    store.close()
    newer = point(T0 + 20).as_json()
    newer["wifi"] = {"clients": 3}  # a key a newer keel writes
    newer["latency"]["tunnel"]["jitter_ms"] = 1.5
    newer["latency"]["satellite"] = {"p50_ms": 600.0}
    wrong = point(T0 + 30).as_json()
    wrong["cake"]["up"]["drops"] = "many"
    with raw(path) as db:
        db.execute(f"PRAGMA user_version = {SCHEMA + 1}")
        db.execute("ALTER TABLE points ADD COLUMN source TEXT DEFAULT 'probe'")
        db.execute("CREATE TABLE wifi(t INTEGER, data TEXT)")
        db.executemany("INSERT INTO points(tier, t, data) VALUES (0, ?, ?)",
                       [(T0 + 20, json.dumps(newer)), (T0 + 30, json.dumps(wrong))])
        db.execute("INSERT INTO events VALUES (?, 'solar_flare', ?)", (T0 + 25, json.dumps(
            {"t": T0 + 25, "kind": "solar_flare", "text": "bright", "data": {"x": 1},
             "severity": 3})))
    store = HistoryStore(path)
    assert store.opened_note is None
    got = store.points(T0, T0 + 60)
    assert got == [point(T0 + 10), point(T0 + 20)]  # the known fields, right
    assert store.skipped == 1  # the row with a wrong-typed figure
    assert store.events(T0, T0 + 60) == [Event(T0 + 25, "solar_flare", "bright", {"x": 1})]
    store.write_batch([point(T0 + 40)], [Event(T0 + 41, "boot", "up")])
    assert [p.t for p in store.points(T0, T0 + 60)] == [T0 + 10, T0 + 20, T0 + 40]
    assert store.latest() == point(T0 + 40)
    with raw(path) as db:
        assert db.execute("PRAGMA user_version").fetchone() == (SCHEMA + 1,)  # left newer
        assert db.execute("SELECT source FROM points WHERE t = ?", (T0 + 40,)).fetchone() == (
            "probe",)


@pytest.mark.parametrize("change", [
    "DROP TABLE events",
    "ALTER TABLE points RENAME COLUMN data TO blob",
])
def test_a_store_without_the_tables_it_needs_is_a_clear_error(tmp_path, change):
    path = tmp_path / "h.db"
    HistoryStore(path).close()
    with raw(path) as db:
        db.execute(f"PRAGMA user_version = {SCHEMA + 1}")
        db.execute(change)
    with pytest.raises(StoreError, match=f"{path}.*schema {SCHEMA + 1}.*lacks"):
        HistoryStore(path)
    assert path.exists() and not list(tmp_path.glob("*.corrupt-*"))  # left as it was


def test_an_older_store_is_migrated_in_place(tmp_path):
    path = tmp_path / "h.db"
    with raw(path) as db:  # user_version 0: a file from before the schema
        db.execute("CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT)")
        db.execute("INSERT INTO meta VALUES ('note', 'kept')")
    store = HistoryStore(path, clock=Clock(T0))
    store.write_batch([point(T0 + 10)], [])
    assert store.points(T0, T0 + 10) == [point(T0 + 10)]
    with raw(path) as db:
        assert db.execute("PRAGMA user_version").fetchone() == (SCHEMA,)
        assert dict(db.execute("SELECT key, value FROM meta")) == {"note": "kept",
                                                                   "created": str(T0)}


def test_a_locked_store_is_a_store_error(tmp_path, monkeypatch):
    monkeypatch.setattr(store_mod, "BUSY_SECONDS", 0.1)
    path = tmp_path / "h.db"
    store = HistoryStore(path)
    with raw(path) as db:
        db.execute("BEGIN IMMEDIATE")
        with pytest.raises(StoreError, match=re.escape(f"{path}: database is locked")):
            store.write_batch([point(T0 + 10)], [])
        db.execute("ROLLBACK")
    store.write_batch([point(T0 + 10)], [])


# --- a corrupt file ---------------------------------------------------------------


def filled(path: Path) -> None:
    with HistoryStore(path) as store:
        for batch in batches(T0, T0 + 6 * 3600, size=360):
            store.write_batch(batch, [])


def assert_fresh(store: HistoryStore, path: Path, aside: Path) -> None:
    assert store.opened_note and "corrupt" in store.opened_note
    assert aside.name in store.opened_note
    assert store.points(0, T0 * 2) == []
    store.write_batch([point(T0 + 10)], [])
    assert store.latest() == point(T0 + 10)
    with raw(path) as db:
        assert db.execute("PRAGMA quick_check").fetchall() == [("ok",)]


def test_random_bytes_are_moved_aside_for_a_fresh_store(tmp_path):
    path = tmp_path / "h.db"
    junk = random.Random(7).randbytes(20_000)
    path.write_bytes(junk)
    store = HistoryStore(path, clock=Clock(1234))
    aside = tmp_path / "h.db.corrupt-1234"
    assert aside.read_bytes() == junk
    assert_fresh(store, path, aside)


@pytest.mark.usefixtures("no_fsync")
@pytest.mark.parametrize("damage", ["truncated", "a page overwritten"])
def test_a_damaged_database_is_moved_aside_for_a_fresh_store(tmp_path, damage):
    path = tmp_path / "h.db"
    filled(path)
    data = bytearray(path.read_bytes())
    assert len(data) > 20 * 16_384
    if damage == "truncated":
        data = data[:len(data) // 2]
    else:
        data[5 * 16_384:6 * 16_384] = random.Random(3).randbytes(16_384)
    path.write_bytes(bytes(data))
    store = HistoryStore(path, clock=Clock(99))
    assert_fresh(store, path, tmp_path / "h.db.corrupt-99")


def test_at_most_two_corrupt_files_are_kept(tmp_path):
    path = tmp_path / "h.db"
    for stamp in (100, 200, 300, 300):  # the second at 300 takes 301
        path.write_bytes(b"not a database" * 1000)
        store = HistoryStore(path, clock=Clock(stamp))
        assert store.opened_note
        store.close()
    assert sorted(p.name for p in tmp_path.glob("h.db.corrupt-*")) == [
        "h.db.corrupt-300", "h.db.corrupt-301"]


def test_a_store_that_cannot_be_made_is_a_store_error(tmp_path):
    (tmp_path / "file").write_text("")
    with pytest.raises(StoreError, match=re.escape("file/h.db")):
        HistoryStore(tmp_path / "file" / "h.db")


# --- any row a read meets ---------------------------------------------------------

JSONISH = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner,
                                                                max_size=4),
    max_leaves=12)
FIGURES = ("p50_ms", "p95_ms", "max_ms", "loss", "sent", "rate_kbit", "throughput_bps",
           "drops", "marks", "backlog_bytes", "adaptive", "user", "system", "softirq", "steal")
PARTS = st.dictionaries(st.sampled_from(FIGURES), JSONISH, max_size=5)
POINTISH = st.fixed_dictionaries(
    {"t": st.just(T0 + 10) | JSONISH},
    optional={"seconds": st.just(10) | JSONISH,
              "latency": st.dictionaries(st.sampled_from((*PATHS, "x")), PARTS | JSONISH,
                                         max_size=3) | JSONISH,
              "cake": st.dictionaries(st.sampled_from((*WAYS, "x")), PARTS | JSONISH,
                                      max_size=3) | JSONISH,
              "cores": st.lists(PARTS | JSONISH, max_size=3) | JSONISH,
              "wan_rx_bps": JSONISH, "stall_worst_ms": JSONISH,
              "causes": st.dictionaries(st.text(max_size=50), JSONISH, max_size=3) | JSONISH,
              "evidence": JSONISH})
EVENTISH = st.fixed_dictionaries({"t": st.just(T0 + 1.0) | JSONISH},
                                 optional={"kind": JSONISH, "text": JSONISH, "data": JSONISH})
ROW = (POINTISH.map(json.dumps) | JSONISH.map(json.dumps) | st.text(max_size=30)
       | st.binary(max_size=30) | st.integers(-2**63, 2**63 - 1))


@pytest.mark.usefixtures("no_fsync")
def test_no_stored_row_makes_a_read_fail(tmp_path):
    store = HistoryStore(tmp_path / "h.db")
    db = sqlite3.connect(store.path, isolation_level=None)
    db.execute("PRAGMA synchronous=OFF")

    @settings(max_examples=200, deadline=None)
    @given(points=st.lists(ROW, max_size=4),
           events=st.lists(EVENTISH.map(json.dumps) | ROW, max_size=3))
    def check(points: list[object], events: list[object]) -> None:
        db.execute("BEGIN")
        db.execute("DELETE FROM points")
        db.execute("DELETE FROM events")
        db.executemany("INSERT INTO points VALUES (0, ?, ?)",
                       [(T0 + 10 * (i + 1), data) for i, data in enumerate(points)])
        db.executemany("INSERT INTO events VALUES (?, 'x', ?)",
                       [(T0 + 1, data) for data in events])
        db.execute("COMMIT")
        got = store.points(T0, T0 + 60)
        assert len(got) + store.skipped == len(points)
        assert all(isinstance(p, Point) and p.seconds == 10 for p in got)
        got_events = store.events(T0, T0 + 60)
        assert len(got_events) + store.skipped == len(events)
        store.latest()
        # what reads back as a point is rolled up and written without a fault
        store.write_batch([], [])

    check()
    db.close()

