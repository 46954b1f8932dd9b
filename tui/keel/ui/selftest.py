"""The self-test as the UI sees it: the runner Protocol (it yields the events
of keel.selftest.events), what the screen shows of a finished run (Outcome),
and a fake runner that replays scripted events (tests, benchmark, --fake)."""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from keel.parse.ping import LatencySample
from keel.selftest.events import Event, Failed, Progress, Sample
from keel.selftest.grading import LatencyStats
from keel.selftest.report import short_lines
from keel.selftest.results import (
    BufferbloatResult,
    MtuResult,
    PhaseResult,
    TestResult,
    ThroughputPhase,
    ThroughputResult,
)

KINDS = ("throughput", "bufferbloat", "mtu")


@dataclass(frozen=True)
class RecommendedRates:
    egress_bps: int
    ingress_bps: int


@dataclass(frozen=True)
class MeasuredRates:
    """What the throughput test carried each way (its best phase), bits/s:
    adaptive CAKE's max (keel.apply.rates.adaptive_bounds)."""

    egress_bps: int
    ingress_bps: int


@dataclass(frozen=True)
class Outcome:
    """A finished (or failed) run, as the screen shows it."""

    kind: str
    ok: bool
    grade: str | None = None  # "A+".."F" for bufferbloat
    summary: tuple[str, ...] = ()  # ready-to-show lines (ASCII)
    recommended: RecommendedRates | None = None
    error: str | None = None
    measured: MeasuredRates | None = None


def outcome(kind: str, results: Sequence[TestResult]) -> Outcome:
    """The run's results (a compared bufferbloat run has two, CAKE last)."""
    grade = next((r.grade for r in reversed(results) if isinstance(r, BufferbloatResult)), None)
    rates = next((RecommendedRates(r.recommend_up_kbit * 1000, r.recommend_down_kbit * 1000)
                  for r in results if isinstance(r, ThroughputResult)), None)
    measured = next((MeasuredRates(round(max(p.up_mbit for p in r.phases) * 1e6),
                                   round(max(p.down_mbit for p in r.phases) * 1e6))
                     for r in results if isinstance(r, ThroughputResult) and r.phases), None)
    return Outcome(kind, True, grade, tuple(short_lines(results)), rates, measured=measured)


def failure(event: Failed) -> Outcome:
    return Outcome(event.test, False, error=event.error)


class SelfTestRunner(Protocol):
    def start(self, kind: str, options: Mapping[str, Any]) -> Iterator[Event]:
        """Run a test; yield its events: progress and samples, then its results
        or one Failed. The caller may stop early by closing the iterator (the
        runner must then stop its load generators)."""
        ...


@dataclass
class FakeSelfTestRunner:
    """Replays scripted events; `delay` seconds before each Progress."""

    scripts: Mapping[str, Sequence[Event]] = field(default_factory=dict)
    delay: float = 0.0
    started: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    closed: bool = False

    def start(self, kind: str, options: Mapping[str, Any]) -> Iterator[Event]:
        self.started.append((kind, dict(options)))
        events = self.scripts.get(kind) or default_script(kind, bool(options.get("compare")))
        try:
            for event in events:
                if self.delay and isinstance(event, Progress):
                    time.sleep(self.delay)
                yield event
        except GeneratorExit:
            self.closed = True
            raise


FAKE_START = 1_795_343_000.0  # epoch seconds the fake runs start (fixed: snapshots)
FAKE_PHASES = (("idle", 4.8, 3.1, None), ("download", 9.1, 3.4, 4.3),
               ("upload", 8.2, 3.3, 3.4), ("bidirectional", 9.6, 3.5, 4.8))


def _stats(p50: float) -> LatencyStats:
    return LatencyStats(40, 0, p50, round(p50 * 1.36, 1), round(p50 * 1.6, 1))


def fake_bufferbloat(increase_ms: float, bypassed: bool) -> BufferbloatResult:
    scale = increase_ms / 3.9
    phases = tuple(PhaseResult(name, _stats(p50 if inc is None else 4.8 + inc * scale),
                               _stats(outside), None if inc is None else inc * scale,
                               None if inc is None else inc * scale, None if inc is None
                               else "A+" if inc * scale < 5 else "F", None, None)
                   for name, p50, outside, inc in FAKE_PHASES)
    return BufferbloatResult(phases, increase_ms, "A+" if increase_ms < 5 else "F",
                             60_000 / 9.1, bypassed)


def fake_samples(phase: str, start: float, seconds: float, base_ms: float,
                 load_ms: float) -> list[Event]:
    events: list[Event] = []
    first = round((start - FAKE_START) * 5)
    for i in range(first, first + int(seconds * 5)):
        t = FAKE_START + i * 0.2  # when the reply came
        wave = load_ms * ((i * 7919) % 13) / 13
        for target, address, rtt in (("tunnel", "10.99.0.2", round(base_ms + wave, 2)),
                                     ("outside", "192.0.2.2", round(3.1 + wave / 10, 2))):
            events.append(Sample(target, address, phase, LatencySample(t - rtt / 1000, rtt)))
    return events


def default_script(kind: str, compare: bool = False) -> list[Event]:
    if kind == "bufferbloat":
        events: list[Event] = []
        runs = [True, False] if compare else [False]
        t = FAKE_START
        for n, bypassed in enumerate(runs):
            for i, (phase, _p50, _outside, inc) in enumerate(FAKE_PHASES):
                done = (n + (i + 0.5) / len(FAKE_PHASES)) / len(runs)
                events.append(Progress("bufferbloat", phase, done, f"loading: {phase}"))
                load = 0.0 if inc is None else 100.0 if bypassed else 2 * inc
                events += fake_samples(phase, t, 8, 4.8, load)
                t += 8
            events.append(fake_bufferbloat(412.0 if bypassed else 3.9, bypassed))
        return events
    if kind == "throughput":
        phase = ThroughputPhase("download", 92.1, 0.0, 12, 8.0, 20.0, 1.2, 3.2,
                                {"cpu0": 0.41, "cpu1": 0.2}, False)
        return [Progress("throughput", "download", 0.25, "download: 4 streams"),
                Progress("throughput", "upload", 0.6, "upload: 4 streams"),
                Progress("throughput", "bidirectional", 0.9, "bidirectional"),
                ThroughputResult((phase, ThroughputPhase(
                    "upload", 0.0, 41.7, 3, 6.0, 15.0, 0.6, 3.4, {"cpu0": 0.3, "cpu1": 0.1},
                    False)), 85_000, 38_000)]
    if kind == "mtu":
        return [Progress("mtu", "probing", 0.5, "probing: DF pings 1420..1280"),
                MtuResult(1500, 1500, 1420, 1420, 1420)]
    return [Failed(kind, f"unknown test {kind!r}")]
