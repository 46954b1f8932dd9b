"""`keel history-daemon`: the router's history, kept whether or not the
console is open (started at boot by /etc/init.d/S42history).

Every INTERVAL_S seconds (on the wall clock's multiples of it) it reads each
collector once, drains its probes (a ping through the tunnel and one outside
it, PROBE_S apart) and the stall meter's seconds, and makes one Point
(keel.history.sampler) and the events of what changed (keel.history.events).
The newest point goes to LATEST on /run at once (the metrics endpoint serves
it); points and events go to the store on /data in one transaction every
BATCH_S seconds (SSD and SD wear), at SIGTERM, and at once on SIGUSR1. A store that cannot be
opened or written does not stop the daemon: it says so once, keeps LATEST
current and tries again at the next batch.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from keel.history.events import (
    apply_event,
    boot_event,
    handshake_events,
    parse_rate_lines,
    rate_events,
    upgrade_event,
)
from keel.history.point import Event, Point
from keel.history.sampler import INTERVAL_S, Interval, point_of, wan_rates
from keel.verdicts import Signals

PROBE_S = 0.5  # the probes' interval: 20 a path in a point
# a batch of points a transaction: at most one write every 5 minutes (SSD and SD
# wear: a store's pages are rewritten by every transaction); a power cut loses
# at most that
BATCH_S = 300
PEER_EVERY = 6  # intervals between looks for the peer to probe (its config may change)
RUN = Path("/run/keel/history")
# in RUN: the newest point (latest.json), and the last batch kept (written.json:
# its newest point's t, and when)
LATEST = RUN / "latest.json"
ADAPT_LOG = Path("/run/keel/adapt.jsonl")
MAX_ADAPT_READ = 256 * 1024  # bytes of adaptive CAKE's log read an interval at most


def write_latest(path: Path, point: Point, causes_now: list[dict[str, Any]],
                 written: float) -> None:
    """The newest point and the verdicts of its last second, for the metrics
    endpoint (keel.metrics.latest_point reads it): replaced whole (a reader
    never sees half of it)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps({"point": point.as_json(), "verdicts": causes_now,
                               "written": written}, separators=(",", ":")) + "\n")
    tmp.replace(path)


@dataclass
class Seen:
    """What the events compare with: the last look at each of their sources."""

    looked: bool = False  # the first look only notes what is there
    revision: int | None = None
    upgrade_at: float | None = None
    fresh: dict[str, bool] = field(default_factory=dict)
    adapt_offset: int | None = None  # None: not read yet (start from its end)


class Router:
    """The live router as the daemon reads it (keel.metrics' collectors and
    keel.system's readers): one read an interval."""

    def __init__(self, source: Any = None) -> None:
        from keel.metrics.collectors import (
            CakeCollector,
            CpuCollector,
            TuningCollector,
            TunnelCollector,
        )
        from keel.metrics.latency import LatencyCollector
        from keel.system.source import RealSource

        self.source = source or RealSource()
        self.tunnel = TunnelCollector(self.source)
        self.cpu = CpuCollector(self.source)
        self.cake = CakeCollector(self.source)
        self.tuning = TuningCollector(self.source)
        self.latency = LatencyCollector([])
        self.peer: Any = None
        self.cake_before: Any = None
        self.wan_before: dict[str, int] | None = None
        self.wan_at = 0.0
        self.names: dict[str, str] = {}
        self.wan_dev: str | None = None

    def follow_peer(self) -> None:
        """The peer to probe (keel.wireguard's chooser, as the console's);
        the probes started again when it changed. No WireGuard interface, no
        `wg` process."""
        from keel.metrics.latency import LatencyCollector, PingProbe
        from keel.metrics.live import probe_peer
        from keel.system.links import wireguard_interfaces

        peer = probe_peer(self.source) if wireguard_interfaces(self.source) else None
        key = None if peer is None else (peer.tunnel_ip, peer.public_ip, peer.fwmark)
        if key == self.peer:
            return
        self.latency.stop()
        probes = []
        if peer is not None:  # as keel.metrics.live.latency_probes, at the daemon's pace
            probes.append(PingProbe("tunnel", peer.tunnel_ip, interval=PROBE_S))
            if peer.public_ip:
                probes.append(PingProbe("outside", peer.public_ip, interval=PROBE_S,
                                        mark=peer.fwmark))
        self.latency = LatencyCollector(probes)
        self.latency.start()
        self.peer = key

    def follow_config(self) -> None:
        """The WAN's NIC and the peers' names, from the config in force."""
        try:
            from keel.model.reading import in_force

            model = in_force()
            self.wan_dev = model.wans[0].interface if model.wans else None
            peers = model.wireguard.peer if model.wireguard else ()
            self.names = {p.public_key: p.name for p in peers if p.name}
        except Exception:  # an invalid config: no WAN to read, no names
            self.wan_dev, self.names = None, {}

    def interval(self, t: int) -> Interval:
        from keel.stall.store import read_recent
        from keel.system.cpu_times import read_load_average
        from keel.system.links import read_counters

        tunnel = self.tunnel.poll()
        cpu = self.cpu.poll()
        cake = self.cake.poll()
        tuning = self.tuning.poll()
        latency = self.latency.poll()
        counters = read_counters(self.wan_dev, self.source) if self.wan_dev else None
        now = time.monotonic()
        wan = None
        if counters is not None:
            reading = {"rx_bytes": counters.rx_bytes, "tx_bytes": counters.tx_bytes}
            wan = wan_rates(self.wan_before, reading, now - self.wan_at)
            self.wan_before, self.wan_at = reading, now
        iv = Interval(t=t, latency=latency, stall=tuple(read_recent(seconds=INTERVAL_S + 2,
                                                                    now=t)),
                      tunnel=tunnel, cpu=cpu, cake=cake, cake_before=self.cake_before,
                      tuning=tuning, wan_rates=wan,
                      load_average=read_load_average(self.source))
        self.cake_before = cake
        return iv

    def stop(self) -> None:
        self.latency.stop()


@dataclass(frozen=True)
class Places:
    """Where the events' sources are (tests give their own)."""

    revisions: Path = Path("/data/keel/revisions")
    upgrades: Path = Path("/data/keel/upgrade")
    adapt_log: Path = ADAPT_LOG


def look(seen: Seen, t: float, tunnel: Any, names: dict[str, str],
         places: Places = Places()) -> list[Event]:
    """The events since the last look (reads the revisions, the upgrade
    record and adaptive CAKE's log)."""
    from keel.state.revisions import RevisionStore
    from keel.upgrade.record import Records

    events: list[Event] = []
    store = RevisionStore(places.revisions)
    number = store.current_number()
    if seen.looked and number != seen.revision and number is not None:
        try:
            note = store.get(number).note
        except (LookupError, OSError):
            note = ""
        if (e := apply_event(t, seen.revision, number, note)) is not None:
            events.append(e)
    seen.revision = number
    last = Records(places.upgrades).last()
    if last is not None:
        if (seen.looked or seen.upgrade_at is not None) and (e := upgrade_event(
                seen.upgrade_at, last.line(), last.at, last.result, last.version)) is not None:
            events.append(e)
        seen.upgrade_at = last.at if seen.upgrade_at is None else max(seen.upgrade_at, last.at)
    seen.looked = True
    if tunnel is not None and not tunnel.error:
        found, seen.fresh = handshake_events(t, seen.fresh, tunnel.peers, names)
        events += found
    events += rate_events(parse_rate_lines(_new_log_lines(seen, places.adapt_log)))
    return events


def _new_log_lines(seen: Seen, path: Path) -> list[bytes]:
    """adaptive CAKE's log lines written since the last look (from its end
    at the first; from its start when it was rewritten shorter)."""
    try:
        with path.open("rb") as f:
            size = f.seek(0, 2)
            if seen.adapt_offset is None or seen.adapt_offset > size:
                start = size if seen.adapt_offset is None else 0
            else:
                start = seen.adapt_offset
            start = max(start, size - MAX_ADAPT_READ)
            f.seek(start)
            data = f.read(size - start)
    except OSError:
        seen.adapt_offset = 0
        return []
    end = data.rfind(b"\n") + 1  # a line being written waits for the next look
    seen.adapt_offset = start + end
    return data[:end].splitlines()


class Daemon:
    def __init__(self, store_path: Path, router: Router | None = None,
                 clock: Callable[[], float] = time.time, say: Callable[[str], None] = print,
                 run_dir: Path = RUN, places: Places = Places()) -> None:
        self.store_path, self.clock, self.say = store_path, clock, say
        self.latest, self.written = run_dir / LATEST.name, run_dir / "written.json"
        self.places = places
        self.router = router or Router()
        self.store: Any = None
        self.points: list[Point] = []
        self.events: list[Event] = []
        self.history: deque[Signals] = deque(maxlen=INTERVAL_S)
        self.seen = Seen()
        self.last_batch = clock()
        self.store_failed = False
        self.ticks = 0

    def open_store(self) -> bool:
        if self.store is not None:
            return True
        from keel.history.store import HistoryStore

        try:
            self.store = HistoryStore(self.store_path)
        except Exception as err:  # the daemon keeps /run current without it
            self._failed(f"cannot open {self.store_path}: {err}")
            return False
        note = getattr(self.store, "opened_note", None)
        if note:
            self.say(f"keel history: {note}")
        self.store_failed = False
        return True

    def _failed(self, why: str) -> None:
        if not self.store_failed:
            self.say(f"keel history: {why}; the history is not kept until that is mended")
        self.store_failed = True
        self.store = None

    def start(self, version: str, boot_id: str) -> None:
        """The boot's event, when this boot is new to the store."""
        from keel.apply.boot import read_record
        from keel.apply.engine import RUN_DIR

        self.router.follow_config()
        self.router.follow_peer()
        if not self.open_store():
            return
        try:
            kept = self.store.events(0, self.clock() + 3600, kinds=("boot", "upgrade"))
        except Exception as err:
            self._failed(f"cannot read {self.store_path}: {err}")
            kept = []
        # an upgrade's outcome is an event once, whichever boot saw it
        self.seen.upgrade_at = max((e.t for e in kept if e.kind == "upgrade"), default=0.0)
        if any(e.kind == "boot" and e.data.get("boot_id") == boot_id for e in kept):
            return  # the daemon started again on this boot
        record = read_record(RUN_DIR)
        applied = record.applied if record else None
        self.events.append(boot_event(self.clock(), applied, bool(record and record.failures),
                                      version, boot_id))
        self.flush()  # at once: a router that goes down again within a batch keeps its boots

    def tick(self, t: int) -> Point:
        """One interval ending at `t`: its point, its events; a batch when due."""
        self.ticks += 1
        iv = self.router.interval(t)
        judged = point_of(iv, tuple(self.history))
        self.history.extend(judged.signals)
        self.points.append(judged.point)
        found = look(self.seen, t, iv.tunnel, self.router.names, self.places)
        self.events += found
        # the peer to probe, again: after an apply, while there is none, and
        # now and then (a handshake may change the chooser's pick); the config
        # after an apply
        applied = any(e.kind == "apply" for e in found)
        if applied:
            self.router.follow_config()
        if applied or self.router.peer is None or self.ticks % PEER_EVERY == 0:
            self.router.follow_peer()
        try:
            write_latest(self.latest, judged.point,
                         [{"cause": v.cause, "severity": v.severity, "text": v.text}
                          for v in judged.verdicts], self.clock())
        except OSError as err:
            self.say(f"keel history: cannot write {self.latest}: {err.strerror}")
        if self.clock() - self.last_batch >= BATCH_S:
            self.flush()
        return judged.point

    def flush(self) -> None:
        """The points and events not written yet, in one transaction."""
        self.last_batch = self.clock()
        if not (self.points or self.events) or not self.open_store():
            return
        try:
            self.store.write_batch(self.points, self.events)
        except ValueError as err:  # a figure the store refuses: that one left out, once said
            from keel.history.store import writable

            self.say(f"keel history: left out of the history: {err}")
            kept = ([p for p in self.points if writable(p)],
                    [e for e in self.events if writable(e)])
            if len(kept[0]) + len(kept[1]) < len(self.points) + len(self.events):
                self.points, self.events = kept
                self.flush()
            return
        except Exception as err:
            self._failed(f"cannot write {self.store_path}: {err}")
            if len(self.points) > 6 * BATCH_S:  # a store down for long: keep the newest
                del self.points[:-6 * BATCH_S]
            return
        newest = max(p.t for p in self.points) if self.points else None
        self.points, self.events = [], []
        try:
            self.written.parent.mkdir(parents=True, exist_ok=True)
            self.written.write_text(json.dumps({"newest": newest, "at": self.clock()}) + "\n")
        except OSError:
            pass  # (a note for whoever watches; the store has the batch)

    def run(self, stop: threading.Event, wake: threading.Event | None = None) -> None:
        """Ticks on the wall clock's multiples of INTERVAL_S until `stop`;
        `wake` set without `stop` (SIGUSR1) writes the batch at once; at the
        end, the batch left. (Without `wake`, `stop` alone wakes it.)"""
        wake = wake or stop
        while not stop.is_set():
            t = (int(self.clock()) // INTERVAL_S + 1) * INTERVAL_S
            while not stop.is_set() and (left := t - self.clock()) > 0:
                if wake.wait(left) and not stop.is_set():
                    wake.clear()
                    self.flush()
            if stop.is_set():
                break
            self.tick(t)
        self.flush()
        self.router.stop()


def main(argv: list[str] | None = None) -> int:
    from keel.history.store import DEFAULT_PATH
    from keel.system.console import boot_id
    from keel.version import image_version

    parser = argparse.ArgumentParser(prog="keel history-daemon")
    parser.add_argument("--store", type=Path, default=DEFAULT_PATH)
    parser.add_argument("--run-dir", type=Path, default=RUN, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    stop, wake = threading.Event(), threading.Event()

    def finish(*_: object) -> None:
        stop.set()
        wake.set()

    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, finish)
    signal.signal(signal.SIGUSR1, lambda *_: wake.set())
    daemon = Daemon(args.store, say=lambda line: print(line, file=sys.stderr, flush=True),
                    run_dir=args.run_dir)
    daemon.start(image_version(), boot_id())
    daemon.run(stop, wake)
    return 0


if __name__ == "__main__":
    sys.exit(main())
