"""`keel fleet watch`: the hub's own look at its edges, a daemon `keel apply`
starts on a router with edges (peers with fleet = "edge"; keel.apply.fleet).

Every WATCH_EVERY_S, and at once on SIGUSR1 (`keel pair` and `keel peers
remove` send it), it asks each edge for its status (keel.fleet.hub.poll),
gives every edge that answered with routes other than those due the ones due
(an edge that was down when another paired or left catches up here), and
writes what it found to SNAPSHOT on /run (the metrics endpoint serves it),
and when each edge last answered to keel.fleet.hub.SEEN on /data: when an
edge comes or goes, else at most every SEEN_EVERY_S (SSD and SD wear)."""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from keel.fleet import wire
from keel.fleet.hub import EdgeRow, Synced
from keel.shown import shown

WATCH_EVERY_S = 30.0
SEEN_EVERY_S = 300.0
SNAPSHOT = Path("/run/keel/fleet/edges.json")
MAX_SNAPSHOT_BYTES = 4 * 1024 * 1024


@dataclass(frozen=True)
class Seen:
    """What a snapshot keeps of an edge: its name, whether and how it
    answered, the hub's handshake age, when the edge last answered."""

    name: str
    status: wire.Status | None
    handshake_age_s: float | None = None
    last_seen: float | None = None
    error: str = ""


def snapshot_json(rows: Sequence[EdgeRow], at: float) -> dict[str, Any]:
    return {"at": at, "edges": [
        {"name": r.edge.name, "handshake_age_s": r.handshake_age_s, "last_seen": r.last_seen,
         "error": r.error, "status": r.status.as_json() if r.status else None} for r in rows]}


def read_snapshot(path: Path = SNAPSHOT) -> tuple[tuple[Seen, ...], float]:
    """The watcher's last snapshot: (edges, when it was made); ((), 0.0) when
    there is none or it does not read whole (it is replaced whole, so that
    means no watcher, or a bug: nothing is served from half a file)."""
    try:
        if path.stat().st_size > MAX_SNAPSHOT_BYTES:
            return (), 0.0
        data = json.loads(path.read_text())
        at = float(data["at"])
        out = []
        for e in data["edges"]:
            status = None if e["status"] is None else wire.parse_status(e["status"])
            age, seen = e["handshake_age_s"], e["last_seen"]
            out.append(Seen(shown(e["name"], 64), status,
                            None if age is None else float(age),
                            None if seen is None else float(seen), shown(e["error"], 200)))
    except (OSError, ValueError, KeyError, TypeError):
        return (), 0.0
    return tuple(out), at


def write_json(path: Path, data: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data, separators=(",", ":")) + "\n")
    tmp.replace(path)


@dataclass
class Watcher:
    """One look a tick: `look(seen)` polls the edges (updating `seen`, name ->
    when it last answered), `give(rows)` gives the edges that are behind
    their routes; the snapshot and `seen` are written by `keep`."""

    look: Callable[[dict[str, float]], tuple[list[EdgeRow], float]]
    give: Callable[[list[EdgeRow]], list[Synced]]
    keep_snapshot: Callable[[dict[str, Any]], None]
    keep_seen: Callable[[dict[str, float]], None]
    say: Callable[[str], None]
    clock: Callable[[], float] = time.time
    seen: dict[str, float] = field(default_factory=dict)
    seen_kept_at: float = 0.0
    answered: frozenset[str] = frozenset()

    def tick(self) -> list[EdgeRow]:
        rows, at = self.look(self.seen)
        behind = [r for r in rows if r.status is not None and not r.routes_in_sync]
        if behind:
            for result in self.give(behind):
                words = ", ".join(result.routes) or "none"
                self.say(f"keel fleet watch: {result.name}: "
                         + (f"NOT given its routes ({words}): {result.error}" if result.error
                            else f"given its routes ({words})"))
        try:
            self.keep_snapshot(snapshot_json(rows, at))
        except OSError as err:
            self.say(f"keel fleet watch: cannot write {SNAPSHOT}: {err.strerror}")
        answered = frozenset(r.edge.name for r in rows if r.status is not None)
        now = self.clock()
        if answered != self.answered or now - self.seen_kept_at >= SEEN_EVERY_S:
            for name in sorted(answered ^ self.answered):
                self.say(f"keel fleet watch: {name} "
                         f"{'answers' if name in answered else 'does not answer'}")
            try:
                self.keep_seen(self.seen)
                self.seen_kept_at = now
            except OSError as err:
                self.say(f"keel fleet watch: cannot keep when each edge answered: "
                         f"{err.strerror}")
            self.answered = answered
        return rows


# --- the real side ------------------------------------------------------------------

def _look_in_force(seen: dict[str, float]) -> tuple[list[EdgeRow], float]:
    from keel.apply.errors import InvalidConfig
    from keel.fleet import hub
    from keel.model.reading import config_in_force, read_loaded
    from keel.pair.peers import read_peer_rows

    now = time.time()
    try:
        config = read_loaded(config_in_force()).config
    except InvalidConfig:
        return [], now
    peers, _ = read_peer_rows()
    return hub.poll(config, peers, now, seen=seen), now


def _give_in_force(rows: list[EdgeRow]) -> list[Synced]:
    from keel.fleet import hub
    from keel.model.reading import config_in_force, read_loaded

    config = read_loaded(config_in_force()).config
    names = {r.edge.name for r in rows}
    return hub.sync(config, only=names)


def run_watch(every: float = WATCH_EVERY_S, log: Path = Path("/run/keel/fleet-watch.log")
              ) -> int:
    """The daemon: a tick every `every` seconds and on SIGUSR1, until SIGTERM."""
    import signal
    import threading

    from keel.fleet import hub
    from keel.fleet.logfile import append

    def say(line: str) -> None:
        with contextlib.suppress(OSError):
            append(log, line)  # bounded: a down edge is said every tick

    wake, stop = threading.Event(), threading.Event()
    signal.signal(signal.SIGUSR1, lambda *_: wake.set())
    signal.signal(signal.SIGTERM, lambda *_: (stop.set(), wake.set()))
    watcher = Watcher(_look_in_force, _give_in_force, lambda d: write_json(SNAPSHOT, d),
                      hub.write_seen, say, seen=hub.read_seen())
    say(f"keel fleet watch: asking the edges every {every:.0f} s")
    while not stop.is_set():
        try:
            watcher.tick()
        except Exception as err:  # a bug of a tick's must not end the watch
            say(f"keel fleet watch: {type(err).__name__}: {shown(err, 200)}")
        wake.wait(every)
        wake.clear()
    with contextlib.suppress(OSError):
        hub.write_seen(watcher.seen)
    return 0
