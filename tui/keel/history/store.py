"""The history on /data: the router's ten-second points, their rollups and its
events, in one SQLite file (/data/keel/history.db).

Tiers (TIERS): 10-s points kept 2 days, 1-min rollups kept 30 days, 10-min
rollups kept 365 days; events kept 365 days and at most MAX_EVENTS rows. A
tier's age is counted back from the newest point of the batch being written
(the clock when a batch has none), so a router that was off keeps what it had.

Writing: the daemon calls `write_batch` once every few minutes (BATCH_S). A batch is one
SQLite transaction (WAL journal, synchronous=FULL): its 10-s points, the 1-min
and 10-min rollups of every interval it touches (recomputed from the stored
finer points, so an interval still in progress is rewritten by the next batch),
its events and the expiry. A power cut loses at most the batch not yet
committed and never leaves half of one. Readers (`keel history`) run beside the
writer; a busy store is waited for up to BUSY_SECONDS.

Reading: a row that does not parse (bad JSON, a figure of the wrong type, a
time that disagrees with its key) is skipped, never fatal; `skipped` counts the
rows the last read skipped.

Versions: PRAGMA user_version holds the schema a store was made with (SCHEMA).
An older store is migrated in place (MIGRATIONS). A change to the schema is
additive only: new keys in a point's JSON, new columns with a default, new
tables; the tables and columns this code needs (REQUIRED) stay. So a newer
store is read and written by this code as long as they are there, and a store
without them raises StoreError naming the file (the caller carries on without
history). A breaking change takes a new file name, so an older keel after a
rollback never fails on a newer store: it starts its own file.

A corrupt file (not a database, or `PRAGMA quick_check` failing at open) is
moved aside to `<name>.corrupt-<unix time>` (the last KEEP_CORRUPT are kept)
and a fresh store begins; `opened_note` says so (no error is raised for it).

Size: at most 17,280 + 43,200 + 52,560 = 113,040 point rows (2 d / 10 s +
30 d / 1 min + 365 d / 10 min) and MAX_EVENTS events. A point is kept at the
precision of point.kept, without the fields at their default: the largest a
router writes (2 paths, 2 ways, 16 cores, MAX_CAUSES causes, MAX_EVIDENCE
characters of evidence) is under MAX_POINT_BYTES (1.5 kB), two to a 4 kB page;
a 4-core router's is some 660 bytes. Measured with every tier full and
MAX_EVENTS events of MAX_EVENT_BYTES (tests/unit/history/test_store.py): 287 MB
with the largest points (SIZE_BOUND: 300 MB), 145 MB with a 4-core router's.
Written: a batch's transaction touches a few pages: at one batch every 5
minutes (keel.history.daemon), some 1.4 MB an hour (`python -m bench.history`).
"""

from __future__ import annotations

import contextlib
import glob
import json
import math
import os
import sqlite3
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from keel.history.point import Event, Point, kept, rollup

DEFAULT_PATH = Path("/data/keel/history.db")
DAY = 86_400


@dataclass(frozen=True)
class Tier:
    seconds: int  # the length of its points
    keep: int  # seconds kept, back from the newest point


TIERS = (Tier(10, 2 * DAY), Tier(60, 30 * DAY), Tier(600, 365 * DAY))
EVENT_KEEP = 365 * DAY
MAX_EVENTS = 50_000
# an event's JSON (300 characters of words and its figures); a longer one is refused
MAX_EVENT_BYTES = 800
MAX_POINT_BYTES = 1_600  # the largest point a router writes, as stored
# SQLite's default page: a point (a rowid table's row, up to ~4 kB) stays in
# its leaf, and a batch's transaction writes few of them
PAGE_SIZE = 4_096
SIZE_BOUND = 300_000_000  # bytes of the file and its WAL at their fullest (see above)
BUSY_SECONDS = 10.0
SYNCHRONOUS = "FULL"  # a committed batch is on the disk before write_batch returns
WAL_PAGES = 1_024  # checkpoint the WAL at ~4 MB; it is cut back to that after a VACUUM
KEEP_CORRUPT = 2

SCHEMA = 1
# MIGRATIONS[v] takes a store from user_version v to v + 1 (0: a new file)
MIGRATIONS: tuple[tuple[str, ...], ...] = (
    ("CREATE TABLE IF NOT EXISTS points(tier INTEGER NOT NULL, t INTEGER NOT NULL,"
     " data TEXT NOT NULL, PRIMARY KEY(tier, t))",
     "CREATE TABLE IF NOT EXISTS events(t REAL NOT NULL, kind TEXT NOT NULL,"
     " data TEXT NOT NULL)",
     "CREATE INDEX IF NOT EXISTS events_t ON events(t)",
     "CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT)"),
)
# what this code reads and writes: it must be in any store, older or newer
REQUIRED = {"points": {"tier", "t", "data"}, "events": {"t", "kind", "data"},
            "meta": {"key", "value"}}


class StoreError(RuntimeError):
    """The history cannot be used (unreadable, locked, a schema without the
    tables this code needs); the message names the file."""


class _Corrupt(Exception):
    """The file is not a sound database: it is moved aside."""


class HistoryStore:
    """The history file at `path`, opened (made, migrated, or replaced when
    corrupt) at once. `clock` gives the time where no point does: a batch
    without points, a read of a store without any, a corrupt file's new name.
    Raises StoreError when the store cannot be used; ValueError for bad input."""

    def __init__(self, path: Path | str = DEFAULT_PATH, *,
                 clock: Callable[[], float] = time.time) -> None:
        self.path = Path(path)
        self._clock = clock
        self.opened_note: str | None = None  # set when a corrupt file was moved aside
        self.skipped = 0  # rows the last read skipped as unreadable
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            try:
                self._db = self._connect()
            except _Corrupt as e:
                aside = self._move_aside()
                self.opened_note = (f"{self.path} was corrupt ({e}): moved aside to "
                                    f"{aside.name}; a fresh history begins")
                self._db = self._connect()
        except _Corrupt as e:
            raise StoreError(f"history store {self.path}: corrupt after a fresh start: {e}"
                             ) from None
        except (sqlite3.Error, OSError) as e:
            raise StoreError(f"history store {self.path}: {e}") from e

    # --- opening --------------------------------------------------------------------

    def _connect(self) -> sqlite3.Connection:
        db = sqlite3.connect(self.path, timeout=BUSY_SECONDS, isolation_level=None)
        try:
            db.execute(f"PRAGMA page_size={PAGE_SIZE}")  # a new file only
            db.execute("PRAGMA journal_mode=WAL")
            db.execute(f"PRAGMA synchronous={SYNCHRONOUS}")
            db.execute(f"PRAGMA wal_autocheckpoint={WAL_PAGES}")
            db.execute(f"PRAGMA journal_size_limit={WAL_PAGES * PAGE_SIZE}")
            problems = [row[0] for row in db.execute("PRAGMA quick_check(3)")]
            if problems != ["ok"]:
                raise _Corrupt("; ".join(str(p) for p in problems))
            self._migrate(db)
            self._check_schema(db)
        except sqlite3.DatabaseError as e:
            db.close()
            if (getattr(e, "sqlite_errorcode", 0) & 0xFF) in (sqlite3.SQLITE_CORRUPT,
                                                              sqlite3.SQLITE_NOTADB):
                raise _Corrupt(str(e)) from e
            raise
        except BaseException:
            db.close()
            raise
        return db

    def _migrate(self, db: sqlite3.Connection) -> None:
        """Bring an older store up to SCHEMA; leave a newer one as it is."""
        if db.execute("PRAGMA user_version").fetchone()[0] >= SCHEMA:
            return
        with _transaction(db):
            version = db.execute("PRAGMA user_version").fetchone()[0]  # under the lock
            for step in MIGRATIONS[version:SCHEMA]:
                for statement in step:
                    db.execute(statement)
            if version == 0:
                db.execute("INSERT OR IGNORE INTO meta(key, value) VALUES ('created', ?)",
                           (str(int(self._clock())),))
            if version < SCHEMA:
                db.execute(f"PRAGMA user_version={SCHEMA}")

    def _check_schema(self, db: sqlite3.Connection) -> None:
        for table, needed in REQUIRED.items():
            have = {row[1] for row in db.execute(f"PRAGMA table_info({table})")}
            if not needed <= have:
                version = db.execute("PRAGMA user_version").fetchone()[0]
                missing = ", ".join(sorted(needed - have))
                raise StoreError(f"history store {self.path} (schema {version}, this keel "
                                 f"knows {SCHEMA}): table {table} lacks {missing}")

    def _move_aside(self) -> Path:
        """Rename the corrupt file (and its WAL) to <name>.corrupt-<unix time>,
        drop its shared-memory index, keep the newest KEEP_CORRUPT asides."""
        stamp = int(self._clock())
        while (aside := self.path.with_name(f"{self.path.name}.corrupt-{stamp}")).exists():
            stamp += 1
        os.replace(self.path, aside)
        with contextlib.suppress(FileNotFoundError):
            os.replace(f"{self.path}-wal", f"{aside}-wal")
        for leftover in (f"{self.path}-shm", f"{self.path}-journal"):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(leftover)
        asides = sorted(
            (int(p.name.rsplit("-", 1)[1]), p)
            for p in self.path.parent.glob(glob.escape(self.path.name) + ".corrupt-*")
            if p.name.rsplit("-", 1)[1].isdigit())
        for _, old in asides[:-KEEP_CORRUPT]:
            for f in (old, Path(f"{old}-wal")):
                with contextlib.suppress(FileNotFoundError):
                    f.unlink()
        return aside

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> HistoryStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- writing --------------------------------------------------------------------

    def write_batch(self, points: Sequence[Point], events: Sequence[Event]) -> None:
        """Store 10-s `points` (a point already stored at a time is replaced)
        and `events`, with the rollups they touch and the expiry, in one
        transaction. A bad point or event raises ValueError naming it, and
        nothing of the batch is written."""
        rows = [(p.t, _encode_point(p)) for p in points]
        event_rows = [(e.t, e.kind, _encode_event(e)) for e in events]
        now = max((t for t, _ in rows), default=None)
        now = self._clock() if now is None else now
        minutes = sorted({_end(t, TIERS[1].seconds) for t, _ in rows})
        tens = sorted({_end(m, TIERS[2].seconds) for m in minutes})
        with self._errors(), _transaction(self._db) as db:
            db.executemany("INSERT OR REPLACE INTO points(tier, t, data) VALUES (0, ?, ?)",
                           rows)
            for m in minutes:
                self._roll_up(db, 1, m)
            for m in tens:
                self._roll_up(db, 2, m)
            db.executemany("INSERT INTO events(t, kind, data) VALUES (?, ?, ?)", event_rows)
            _expire(db, now, trim_events=bool(event_rows))

    def _roll_up(self, db: sqlite3.Connection, tier: int, end: int) -> None:
        """The point of `tier` ending at `end`, from the stored points of the
        tier below (the unreadable ones left out)."""
        finer, this = TIERS[tier - 1], TIERS[tier]
        cur = db.execute("SELECT t, CAST(data AS BLOB) FROM points"
                         " WHERE tier = ? AND t > ? AND t <= ? ORDER BY t",
                         (tier - 1, end - this.seconds, end))
        got = [p for t, data in cur
               if (p := _parse_point(t, finer.seconds, data)) is not None]
        point = rollup(got, t=end, seconds=this.seconds)
        if point is None:
            return
        try:
            data = _point_json(point)
        except ValueError as e:
            raise ValueError(f"history rollup of {this.seconds} s at t={end}: {e}") from None
        db.execute("INSERT OR REPLACE INTO points(tier, t, data) VALUES (?, ?, ?)",
                   (tier, end, data))

    # --- reading --------------------------------------------------------------------

    def points(self, since: float, until: float, seconds: int | None = None) -> list[Point]:
        """The points with since <= t <= until, oldest first, from the tier of
        `seconds` (10, 60 or 600) or else the finest tier whose retention
        reaches back to `since`. Unreadable rows are skipped (`skipped`)."""
        since, until = _time(since, "since"), _time(until, "until")
        with self._errors():
            tier = self._tier_for(since, seconds)
            cur = self._db.execute("SELECT t, CAST(data AS BLOB) FROM points"
                                   " WHERE tier = ? AND t >= ? AND t <= ? ORDER BY t",
                                   (tier, since, until))
            return self._parsed(_parse_point(t, TIERS[tier].seconds, data) for t, data in cur)

    def events(self, since: float, until: float,
               kinds: Iterable[str] | None = None) -> list[Event]:
        """The events with since <= t <= until, oldest first, of `kinds` (a
        kind or a collection of them; None: all). Unreadable rows are skipped."""
        since, until = _time(since, "since"), _time(until, "until")
        sql = "SELECT CAST(data AS BLOB) FROM events WHERE t >= ? AND t <= ?"
        args: list[Any] = [since, until]
        if kinds is not None:
            wanted = [kinds] if isinstance(kinds, str) else [str(k) for k in kinds]
            sql += f" AND kind IN ({', '.join('?' * len(wanted))})"
            args += wanted
        with self._errors():
            cur = self._db.execute(sql + " ORDER BY t, rowid", args)
            return self._parsed(_parse_event(data) for (data,) in cur)

    def latest(self) -> Point | None:
        """The newest readable 10-s point; None for none."""
        self.skipped = 0
        with self._errors():
            cur = self._db.execute("SELECT t, CAST(data AS BLOB) FROM points WHERE tier = 0"
                                   " ORDER BY t DESC")
            for t, data in cur:
                if (point := _parse_point(t, TIERS[0].seconds, data)) is not None:
                    cur.close()
                    return point
                self.skipped += 1
        return None

    def _parsed(self, items: Iterable[Any]) -> list[Any]:
        out: list[Any] = []
        self.skipped = 0
        for item in items:
            if item is None:
                self.skipped += 1
            else:
                out.append(item)
        return out

    def _tier_for(self, since: float, seconds: int | None) -> int:
        if seconds is not None:
            for i, tier in enumerate(TIERS):
                if tier.seconds == seconds:
                    return i
            raise ValueError(f"history: no tier of {seconds!r} s (there are "
                             f"{', '.join(str(t.seconds) for t in TIERS)})")
        newest = self._db.execute("SELECT MAX(t) FROM points WHERE tier = 0").fetchone()[0]
        now = self._clock() if newest is None else newest
        for i, tier in enumerate(TIERS):
            if since >= now - tier.keep:
                return i
        return len(TIERS) - 1

    # --- upkeep ---------------------------------------------------------------------

    def size_bytes(self) -> int:
        """The bytes of the file and its WAL."""
        total = 0
        for f in (self.path, Path(f"{self.path}-wal")):
            with contextlib.suppress(FileNotFoundError):
                total += f.stat().st_size
        return total

    def vacuum_if_needed(self) -> bool:
        """VACUUM when over a quarter of the file is free pages (the daemon
        calls it rarely, e.g. daily); True when it did."""
        with self._errors():
            pages = self._db.execute("PRAGMA page_count").fetchone()[0]
            free = self._db.execute("PRAGMA freelist_count").fetchone()[0]
            if not pages or free * 4 <= pages:
                return False
            self._db.execute("VACUUM")
            self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        return True

    @contextlib.contextmanager
    def _errors(self) -> Iterator[None]:
        try:
            yield
        except sqlite3.Error as e:
            raise StoreError(f"history store {self.path}: {e}") from e


# --- helpers ----------------------------------------------------------------------


@contextlib.contextmanager
def _transaction(db: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """One write transaction: committed whole, or rolled back whole."""
    db.execute("BEGIN IMMEDIATE")
    try:
        yield db
    except BaseException:
        if db.in_transaction:
            db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")


def _expire(db: sqlite3.Connection, now: float, *, trim_events: bool) -> None:
    """Drop what is past each tier's retention at `now`, the events past theirs,
    and (after new events) the oldest beyond MAX_EVENTS."""
    for i, tier in enumerate(TIERS):
        db.execute("DELETE FROM points WHERE tier = ? AND t <= ?", (i, now - tier.keep))
    db.execute("DELETE FROM events WHERE t <= ?", (now - EVENT_KEEP,))
    if trim_events and db.execute("SELECT COUNT(*) FROM events").fetchone()[0] > MAX_EVENTS:
        db.execute("DELETE FROM events WHERE rowid IN (SELECT rowid FROM events"
                   " ORDER BY t DESC, rowid DESC LIMIT -1 OFFSET ?)", (MAX_EVENTS,))


def _end(t: int, seconds: int) -> int:
    """The end of the `seconds`-long interval holding the point that ends at t."""
    return -(-t // seconds) * seconds


def _dumps(data: Any) -> str:
    return json.dumps(data, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def _point_json(point: Point) -> str:
    """A point as stored: compact JSON without the fields that hold their
    default (Point.from_json reads a missing one as its default)."""
    return _dumps(point.as_stored())


def writable(item: Point | Event) -> bool:
    """Whether write_batch takes this point or event (it refuses a whole batch
    for one it does not, naming it): the daemon leaves such a one out."""
    try:
        _encode_point(item) if isinstance(item, Point) else _encode_event(item)
    except ValueError:
        return False
    return True


def _encode_point(p: Point) -> str:
    """A 10-s point as stored; ValueError naming it unless it reads back."""
    if not isinstance(p, Point):
        raise ValueError(f"history: a batch holds Points, not {type(p).__name__}")
    p = kept(p)
    where = f"history point t={p.t!r}"
    if isinstance(p.t, bool) or not isinstance(p.t, int) or p.t % 10 or p.seconds != 10:
        raise ValueError(f"{where}, seconds={p.seconds!r}: a 10-s point ends at a "
                         "whole multiple of 10 s")
    try:
        data = _point_json(p)
        Point.from_json(json.loads(data))
    except (TypeError, ValueError, OverflowError, RecursionError) as e:
        raise ValueError(f"{where}: {e}") from None
    return data


def _encode_event(e: Event) -> str:
    if not isinstance(e, Event):
        raise ValueError(f"history: a batch holds Events, not {type(e).__name__}")
    where = f"history event {e.kind!r} at t={e.t!r}"
    if isinstance(e.t, bool) or not isinstance(e.t, int | float) or not math.isfinite(e.t):
        raise ValueError(f"{where}: its time is not a finite number")
    try:
        data = _dumps(e.as_json())
    except (TypeError, ValueError, RecursionError) as err:
        raise ValueError(f"{where}: {err}") from None
    if len(data.encode()) > MAX_EVENT_BYTES:
        raise ValueError(f"{where}: {len(data.encode())} bytes of JSON, over "
                         f"{MAX_EVENT_BYTES}")
    return data


def _parse_point(t: int, seconds: int, data: Any) -> Point | None:
    """The row's point, or None when it does not parse or disagrees with its
    key (time, tier)."""
    try:
        point = Point.from_json(json.loads(data))
    except (TypeError, ValueError, OverflowError, RecursionError):
        return None
    return point if point.t == t and point.seconds == seconds else None


def _parse_event(data: Any) -> Event | None:
    try:
        return Event.from_json(json.loads(data))
    except (TypeError, ValueError, OverflowError, RecursionError):
        return None


def _time(value: Any, name: str) -> float:
    try:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise TypeError
        time_ = float(value)
    except (TypeError, OverflowError):
        time_ = math.nan
    if math.isnan(time_):
        raise ValueError(f"history: {name} is not a time: {value!r}")
    return time_
