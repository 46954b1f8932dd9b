"""The self-test screen's latency plot data: the `sample` events of the
running self-test (its own 5 Hz probes, already final: the self-test decided
each probe's RTT or loss with keel.parse.ping.PingTracker) as
LatencySnapshots."""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

from keel.metrics.latency import idle_baseline
from keel.metrics.snapshots import LatencySnapshot, SeriesSnapshot
from keel.parse.ping import LatencySample
from keel.selftest.events import Sample

ORDER = ("tunnel", "outside")


@dataclass
class _Series:
    address: str
    new: list[LatencySample] = field(default_factory=list)
    history: deque[LatencySample] = field(default_factory=lambda: deque(maxlen=1500))
    idle: list[float] = field(default_factory=list)


class SelfTestLatency:
    def __init__(self, recent: int = 50) -> None:
        self.recent = recent
        self._series: dict[str, _Series] = {}
        self.now: float | None = None

    def add(self, event: Sample) -> None:
        s = event.sample
        series = self._series.setdefault(event.target, _Series(event.address))
        seen = s.sent + (s.rtt_ms or 0.0) / 1000
        self.now = max(self.now or seen, seen)
        series.new.append(s)
        series.history.append(s)
        if event.phase == "idle" and s.rtt_ms is not None:
            series.idle.append(s.rtt_ms)

    def snapshot(self) -> LatencySnapshot | None:
        """What arrived since the last snapshot; None before the first sample."""
        if self.now is None:
            return None
        out = []
        names = sorted(self._series, key=lambda n: ORDER.index(n) if n in ORDER else len(ORDER))
        for name in names:
            series = self._series[name]
            new, series.new = tuple(sorted(series.new, key=lambda s: s.sent)), []
            got = [s.rtt_ms for s in series.history if s.rtt_ms is not None]
            tail = list(series.history)[-self.recent:]
            out.append(SeriesSnapshot(
                name=name, target=series.address, new=new, last_ms=got[-1] if got else None,
                idle_ms=idle_baseline(series.idle or got),
                loss=sum(s.rtt_ms is None for s in tail) / len(tail) if tail else 0.0))
        return LatencySnapshot(self.now, tuple(out))
