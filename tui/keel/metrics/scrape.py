"""One scrape of the router for the metrics endpoint: `wg show all dump`
(keel.system.wireguard: the peers' byte counters and handshakes), CAKE's
counters (keel.metrics.collectors.CakeCollector), the history daemon's newest
point (keel.metrics.latest_point), the peers' names from the config in force,
keel's version and the booted slot; made into the exposition's text
(keel.metrics.exposition).

Scrapes are serialised (the CAKE collector keeps its previous read), and a
body younger than MIN_INTERVAL_S is served again: a flood of requests
starts no more processes than one scrape a second."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path

from keel.metrics import exposition
from keel.metrics.collectors import CakeCollector
from keel.metrics.latest_point import LATEST, read_latest
from keel.model.reading import InvalidConfig, config_in_force, read_model
from keel.system.console import cmdline
from keel.system.source import RealSource, Source, SourceError
from keel.system.wireguard import read_wireguard
from keel.upgrade.slots import booted_slot as slot_of
from keel.version import image_version

MIN_INTERVAL_S = 1.0


class PeerNames:
    """The peers' names (public key -> name) of the config in force, read
    again only when its file changed; what was read last stays while the
    file cannot be read or is invalid (apply refuses such a file anyway)."""

    def __init__(self, path: Callable[[], Path] | None = None) -> None:
        self.path = path
        self._seen: tuple[str, int, int] | None = None
        self._names: dict[str, str] = {}

    def __call__(self) -> Mapping[str, str]:
        path = (self.path or config_in_force)()
        try:
            st = path.stat()
        except OSError:
            return self._names
        seen = (str(path), st.st_mtime_ns, st.st_size)
        if seen != self._seen:
            try:
                model = read_model(path)
            except (InvalidConfig, OSError):
                return self._names
            peers = model.wireguard.peer if model.wireguard else ()
            self._names = {p.public_key: p.name for p in peers if p.name}
            self._seen = seen
        return self._names


def booted_slot() -> str | None:
    """The slot GRUB booted (A or B), from the kernel's command line; None
    off a slot (a development run)."""
    try:
        return slot_of(cmdline())
    except (OSError, ValueError):
        return None


class Scraper:
    """Reads the router, renders its exposition; `body()` is what the server
    sends for GET /metrics."""

    def __init__(self, source: Source | None = None, latest: Path = LATEST,
                 names: Callable[[], Mapping[str, str]] | None = None,
                 version: str | None = None, slot: str | None = None,
                 clock: Callable[[], float] = time.monotonic,
                 wallclock: Callable[[], float] = time.time,
                 edges: Callable[[], tuple[exposition.EdgeSample, ...]] | None = None) -> None:
        """`edges`: a hub's edges as its last poll found them (keel.fleet.hub.
        Poller, through keel.metrics.cli); none by default."""
        self.edges = edges or (lambda: ())
        self.source = source or RealSource()
        self.latest, self.clock, self.wallclock = latest, clock, wallclock
        self.names = names or PeerNames()
        self.version = version if version is not None else image_version()
        self.slot = slot
        self.cake = CakeCollector(self.source, clock, wallclock)
        self._lock = threading.Lock()
        self._body: bytes | None = None
        self._at = 0.0
        self.scrapes = 0  # how many were made (not served again)

    def scrape(self) -> exposition.Scrape:
        try:
            tunnels: tuple | None = tuple(read_wireguard(self.source).values())
        except (SourceError, ValueError):  # ValueError: wg's output not UTF-8
            tunnels = None
        latest = read_latest(self.latest, self.wallclock())
        return exposition.Scrape(
            version=self.version, slot=self.slot, wireguard=tunnels,
            peer_names=dict(self.names()), cake=self.cake.poll(),
            point=latest.point if latest else None,
            verdicts=latest.verdicts if latest else None, edges=self.edges())

    def body(self) -> bytes:
        with self._lock:
            now = self.clock()
            if self._body is None or not 0 <= now - self._at < MIN_INTERVAL_S:
                self._body = exposition.render(self.scrape()).encode("utf-8")
                self._at = now
                self.scrapes += 1
            return self._body
