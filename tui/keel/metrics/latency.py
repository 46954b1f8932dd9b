"""Latency probes: one long-lived `ping -D -O -n -i 0.2 <addr>` per target,
read line by line, and the collector that turns their samples into snapshots.

With -O, iputils prints "no answer yet" for every probe still outstanding when
the next one leaves (after 0.2 s), so under bufferbloat (RTT > 200 ms) each
probe is first reported missing and then answered. A probe counts as lost
only when no reply came within `loss_after` seconds, or the kernel reported
it unreachable.
"""

from __future__ import annotations

import math
import subprocess
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from typing import Protocol

from keel.metrics.snapshots import LatencySample, LatencySnapshot, SeriesSnapshot
from keel.parse.ping import parse_ping_line

INTERVAL = 0.2  # 5 Hz


class PingTracker:
    """Turns ping output lines into final samples (pure; fed with lines)."""

    def __init__(self, interval: float = INTERVAL, loss_after: float = 3.0) -> None:
        self.interval, self.loss_after = interval, loss_after
        self._pending: dict[int, float] = {}  # seq -> send time
        self._done: set[int] = set()

    def feed(self, line: str) -> list[LatencySample]:
        sample = parse_ping_line(line)
        if sample is None:
            return []
        if sample.seq in self._done:
            return []
        if sample.rtt_ms is not None:
            self._pending.pop(sample.seq, None)
            self._mark(sample.seq)
            return [LatencySample(sample.timestamp - sample.rtt_ms / 1000, sample.rtt_ms)]
        if "no answer yet" in line:
            # printed as the next probe leaves: this one left an interval ago
            self._pending.setdefault(sample.seq, sample.timestamp - self.interval)
            return []
        self._pending.pop(sample.seq, None)  # "From ... Unreachable": lost for sure
        self._mark(sample.seq)
        return [LatencySample(sample.timestamp, None)]

    def expire(self, now: float) -> list[LatencySample]:
        lost = [(seq, sent) for seq, sent in self._pending.items()
                if now - sent > self.loss_after]
        for seq, _ in lost:
            del self._pending[seq]
            self._mark(seq)
        return [LatencySample(sent, None) for _, sent in sorted(lost)]

    def _mark(self, seq: int) -> None:
        self._done.add(seq)
        if len(self._done) > 4096:
            floor = max(self._done) - 2048
            self._done = {s for s in self._done if s > floor}


class Probe(Protocol):
    name: str  # "tunnel" or "outside"
    target: str

    def start(self) -> None: ...

    def stop(self) -> None: ...

    def drain(self, now: float) -> list[LatencySample]: ...


class PingProbe:
    """One ping subprocess and a reader thread; drain() takes what arrived."""

    def __init__(self, name: str, target: str, interval: float = INTERVAL,
                 argv: Sequence[str] | None = None) -> None:
        self.name, self.target = name, target
        self.argv = list(argv or ["ping", "-D", "-O", "-n", "-i", str(interval), target])
        self.tracker = PingTracker(interval)
        self._samples: deque[LatencySample] = deque(maxlen=1000)
        self._lock = threading.Lock()
        self._proc: subprocess.Popen[str] | None = None
        self._thread: threading.Thread | None = None
        self.error: str | None = None

    def start(self) -> None:
        try:
            self._proc = subprocess.Popen(self.argv, stdout=subprocess.PIPE,
                                          stderr=subprocess.DEVNULL, text=True, bufsize=1)
        except OSError as exc:
            self.error = f"{self.argv[0]}: {exc.strerror}"
            return
        self._thread = threading.Thread(target=self._read, name=f"ping-{self.name}",
                                        daemon=True)
        self._thread.start()

    def _read(self) -> None:
        assert self._proc is not None and self._proc.stdout is not None
        for line in self._proc.stdout:
            with self._lock:
                self._samples.extend(self.tracker.feed(line))

    def stop(self) -> None:
        if self._proc is not None and self._proc.poll() is None:
            self._proc.terminate()
            try:
                self._proc.wait(timeout=2)
            except subprocess.TimeoutExpired:
                self._proc.kill()

    def drain(self, now: float) -> list[LatencySample]:
        with self._lock:
            self._samples.extend(self.tracker.expire(now))
            out = list(self._samples)
            self._samples.clear()
        return sorted(out, key=lambda s: s.sent)


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


def idle_baseline(rtts: Sequence[float], pct: float = 10.0) -> float | None:
    """A low percentile of the RTTs seen: what the path costs with no queue."""
    if not rtts:
        return None
    ordered = sorted(rtts)
    return ordered[min(len(ordered) - 1, int(len(ordered) * pct / 100))]


class LatencyCollector:
    """Drains the probes; keeps a few minutes of history for the idle baseline
    and the loss share."""

    def __init__(self, probes: Sequence[Probe], wallclock: Callable[[], float] = time.time,
                 history: int = 1500, recent: int = 50) -> None:
        self.probes = list(probes)
        self.wallclock = wallclock
        self.recent = recent
        self._history = {p.name: deque(maxlen=history) for p in self.probes}

    def start(self) -> None:
        for probe in self.probes:
            probe.start()

    def stop(self) -> None:
        for probe in self.probes:
            probe.stop()

    def poll(self) -> LatencySnapshot:
        now = self.wallclock()
        series = []
        for probe in self.probes:
            new = tuple(probe.drain(now))
            hist = self._history[probe.name]
            hist.extend(new)
            got = [s.rtt_ms for s in hist if s.rtt_ms is not None]
            tail = list(hist)[-self.recent:]
            last = next((s.rtt_ms for s in reversed(hist) if s.rtt_ms is not None), None)
            series.append(SeriesSnapshot(
                name=probe.name, target=probe.target, new=new, last_ms=last,
                idle_ms=idle_baseline(got),
                loss=sum(s.rtt_ms is None for s in tail) / len(tail) if tail else 0.0))
        return LatencySnapshot(now, tuple(series))
