"""Latency probes and the collector that turns their samples into snapshots.
A real probe is one keel.system.ping.PingProcess (the same process type, the
same timestamp and loss rules as the self-tests); a fake one computes samples
from the clock."""

from __future__ import annotations

import bisect
import math
import time
from collections import deque
from collections.abc import Callable, Sequence
from typing import Protocol

from keel.metrics.remembered import remembered
from keel.metrics.snapshots import LatencySnapshot, SeriesSnapshot
from keel.parse.ping import LatencySample
from keel.system.ping import INTERVAL, PingProcess


class Probe(Protocol):
    name: str  # "tunnel" or "outside"
    target: str

    def start(self) -> None: ...

    def stop(self) -> None: ...

    def drain(self, now: float) -> list[LatencySample]: ...


class PingProbe:
    """A named ping process; drain() takes what became final."""

    def __init__(self, name: str, target: str, interval: float = INTERVAL,
                 argv: Sequence[str] | None = None, mark: int | None = None) -> None:
        self.name, self.target = name, target
        self.process = PingProcess(target, interval, argv=argv, mark=mark)

    @property
    def error(self) -> str | None:
        return self.process.error

    def start(self) -> None:
        self.process.start()

    def stop(self) -> None:
        self.process.stop()

    def drain(self, now: float) -> list[LatencySample]:
        return self.process.drain(now)


class FakeProbe:
    """Synthetic 5 Hz samples computed from the clock (no thread, no process):
    a base RTT, a slow wave of load and a lost probe every `loss_every`."""

    def __init__(self, name: str, target: str, base_ms: float, load_ms: float = 0.0,
                 period: float = 40.0, loss_every: int = 0, interval: float = INTERVAL,
                 start_at: float | None = None) -> None:
        self.name, self.target = name, target
        self.base_ms, self.load_ms, self.period = base_ms, load_ms, period
        self.loss_every, self.interval = loss_every, interval
        self._next = start_at
        self._seq = 0

    def start(self) -> None:
        pass

    def stop(self) -> None:
        pass

    def rtt(self, t: float, seq: int) -> float | None:
        if self.loss_every and seq % self.loss_every == self.loss_every - 1:
            return None
        wave = max(0.0, math.sin(2 * math.pi * t / self.period))
        jitter = ((seq * 7919) % 13) / 13 * 0.1 * self.base_ms
        return round(self.base_ms + jitter + self.load_ms * wave ** 2, 2)

    def drain(self, now: float) -> list[LatencySample]:
        if self._next is None:
            self._next = now - 10 * self.interval
        out = []
        while self._next <= now:
            out.append(LatencySample(self._next, self.rtt(self._next, self._seq)))
            self._seq += 1
            self._next += self.interval
        return out


IDLE_PCT = 10.0  # the idle baseline's percentile of the RTTs seen


def idle_baseline(rtts: Sequence[float], pct: float = IDLE_PCT) -> float | None:
    """A low percentile of the RTTs seen: what the path costs with no queue."""
    return ranked_percentile(sorted(rtts), pct)


def ranked_percentile(ordered: Sequence[float], pct: float = IDLE_PCT) -> float | None:
    """idle_baseline of RTTs already sorted."""
    if not ordered:
        return None
    return ordered[min(len(ordered) - 1, int(len(ordered) * pct / 100))]


class LatencyCollector:
    """Drains the probes; keeps a few minutes of history for the idle baseline
    and the loss share. The history's RTTs are also kept sorted, a sample in
    and the oldest out at a time, so a poll does not sort minutes of samples
    (it did, twice a second: most of what the collectors cost the console UI)."""

    def __init__(self, probes: Sequence[Probe], wallclock: Callable[[], float] = time.time,
                 history: int = 1500, recent: int = 50) -> None:
        self.probes = list(probes)
        self.wallclock = wallclock
        self.recent = recent
        self._history: dict[str, deque[LatencySample]] = {
            p.name: deque(maxlen=history) for p in self.probes}
        self._ranked: dict[str, list[float]] = {p.name: [] for p in self.probes}
        self.last: LatencySnapshot | None = None  # the latest snapshot (see remembered)

    def start(self) -> None:
        for probe in self.probes:
            probe.start()

    def stop(self) -> None:
        for probe in self.probes:
            probe.stop()

    @remembered
    def poll(self) -> LatencySnapshot:
        now = self.wallclock()
        series = []
        for probe in self.probes:
            new = tuple(probe.drain(now))
            hist, ranked = self._history[probe.name], self._ranked[probe.name]
            for sample in new:
                if len(hist) == hist.maxlen and hist[0].rtt_ms is not None:
                    del ranked[bisect.bisect_left(ranked, hist[0].rtt_ms)]  # out with the oldest
                hist.append(sample)
                if sample.rtt_ms is not None:
                    bisect.insort(ranked, sample.rtt_ms)
            tail = [hist[i] for i in range(-min(self.recent, len(hist)), 0)]
            last = next((s.rtt_ms for s in reversed(hist) if s.rtt_ms is not None), None)
            series.append(SeriesSnapshot(
                name=probe.name, target=probe.target, new=new, last_ms=last,
                idle_ms=ranked_percentile(ranked),
                loss=sum(s.rtt_ms is None for s in tail) / len(tail) if tail else 0.0))
        return LatencySnapshot(now, tuple(series))
