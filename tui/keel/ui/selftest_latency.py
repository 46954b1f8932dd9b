"""The self-test screen's latency plot data: the `sample` events of the
running self-test (its own 5 Hz probes) as LatencySnapshots.

A probe the self-test reported unanswered is held back: a late reply replaces
it, and it counts as lost only when no reply came within `loss_after` seconds
(as on the dashboard)."""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

from keel.metrics.latency import INTERVAL, idle_baseline
from keel.metrics.snapshots import LatencySample, LatencySnapshot, SeriesSnapshot
from keel.selftest.events import Sample

ORDER = ("tunnel", "outside")
RESTART = 100  # a sequence number this far below the highest seen: ping started again


@dataclass
class _Series:
    address: str
    new: list[LatencySample] = field(default_factory=list)
    history: deque[LatencySample] = field(default_factory=lambda: deque(maxlen=1500))
    idle: list[float] = field(default_factory=list)
    pending: dict[int, float] = field(default_factory=dict)  # seq -> send time
    done: set[int] = field(default_factory=set)
    top_seq: int = 0


class SelfTestLatency:
    def __init__(self, loss_after: float = 3.0, recent: int = 50) -> None:
        self.loss_after, self.recent = loss_after, recent
        self._series: dict[str, _Series] = {}
        self.now: float | None = None

    def add(self, event: Sample) -> None:
        s = event.sample
        series = self._series.setdefault(event.target, _Series(event.address))
        self.now = max(self.now or s.timestamp, s.timestamp)
        if s.seq + RESTART < series.top_seq:  # a new ping (the second run of a compare)
            series.done.clear()
            series.pending.clear()
        series.top_seq = s.seq if s.seq + RESTART < series.top_seq else max(series.top_seq, s.seq)
        if s.seq in series.done:
            return
        if s.rtt_ms is None:
            series.pending.setdefault(s.seq, s.timestamp - INTERVAL)
            return
        series.pending.pop(s.seq, None)
        series.done.add(s.seq)
        self._keep(series, LatencySample(s.timestamp - s.rtt_ms / 1000, s.rtt_ms))
        if event.phase == "idle":
            series.idle.append(s.rtt_ms)

    def _keep(self, series: _Series, sample: LatencySample) -> None:
        series.new.append(sample)
        series.history.append(sample)

    def _expire(self, series: _Series, now: float) -> None:
        for seq, sent in sorted(series.pending.items(), key=lambda kv: kv[1]):
            if now - sent > self.loss_after:
                del series.pending[seq]
                series.done.add(seq)
                self._keep(series, LatencySample(sent, None))

    def snapshot(self) -> LatencySnapshot | None:
        """What arrived since the last snapshot; None before the first sample."""
        if self.now is None:
            return None
        out = []
        names = sorted(self._series, key=lambda n: ORDER.index(n) if n in ORDER else len(ORDER))
        for name in names:
            series = self._series[name]
            self._expire(series, self.now)
            new, series.new = tuple(sorted(series.new, key=lambda s: s.sent)), []
            got = [s.rtt_ms for s in series.history if s.rtt_ms is not None]
            tail = list(series.history)[-self.recent:]
            out.append(SeriesSnapshot(
                name=name, target=series.address, new=new, last_ms=got[-1] if got else None,
                idle_ms=idle_baseline(series.idle or got),
                loss=sum(s.rtt_ms is None for s in tail) / len(tail) if tail else 0.0))
        return LatencySnapshot(self.now, tuple(out))
