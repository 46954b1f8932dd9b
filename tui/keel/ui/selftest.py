"""The self-test interface the UI drives. The real runner (iperf3, ping,
grading) comes from keel.selftest later; the UI only needs this Protocol."""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

KINDS = ("throughput", "bufferbloat", "mtu")


@dataclass(frozen=True)
class Progress:
    fraction: float  # 0..1 of the whole test
    phase: str  # "idle", "download", "upload", "bidirectional", ...
    message: str = ""


@dataclass(frozen=True)
class RecommendedRates:
    egress_bps: int
    ingress_bps: int


@dataclass(frozen=True)
class Result:
    kind: str
    ok: bool
    grade: str | None = None  # "A+".."F" for bufferbloat
    summary: tuple[str, ...] = ()  # ready-to-show lines (ASCII)
    recommended: RecommendedRates | None = None
    error: str | None = None


Event = Progress | Result


class SelfTestRunner(Protocol):
    def start(self, kind: str, options: Mapping[str, Any]) -> Iterator[Event]:
        """Run a test; yield Progress events and end with one Result. The
        caller may stop early by closing the iterator (the runner must then
        stop its load generators)."""
        ...


@dataclass
class FakeSelfTestRunner:
    """Replays scripted events (tests, the UI benchmark, development)."""

    scripts: Mapping[str, Sequence[Event]] = field(default_factory=dict)
    delay: float = 0.0
    started: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    closed: bool = False

    def start(self, kind: str, options: Mapping[str, Any]) -> Iterator[Event]:
        self.started.append((kind, dict(options)))
        events = self.scripts.get(kind) or default_script(kind, bool(options.get("compare")))
        try:
            for event in events:
                if self.delay:
                    time.sleep(self.delay)
                yield event
        except GeneratorExit:
            self.closed = True
            raise


def default_script(kind: str, compare: bool = False) -> list[Event]:
    if kind == "bufferbloat":
        phases = ["idle", "download", "upload", "bidirectional"]
        if compare:
            phases += ["download (CAKE bypassed)", "upload (CAKE bypassed)"]
        events: list[Event] = [Progress((i + 0.5) / len(phases), p, f"loading: {p}")
                               for i, p in enumerate(phases)]
        summary = ["idle p50 4.8 ms",
                   "download p50 9.1 p95 12.4 ms (+4.3)",
                   "upload   p50 8.2 p95 11.0 ms (+3.4)",
                   "increase +3.9 ms  RPM 6593 (High)"]
        if compare:
            summary.append("CAKE bypassed: +412 ms (grade F) -> CAKE saves 408 ms")
        events.append(Result("bufferbloat", True, "A+", tuple(summary),
                             RecommendedRates(38_000_000, 85_000_000)))
        return events
    if kind == "throughput":
        return [Progress(0.25, "download", "4 streams"), Progress(0.6, "upload", "4 streams"),
                Progress(0.9, "bidirectional"),
                Result("throughput", True, None,
                       ("download 92.1 Mbit/s  upload 41.7 Mbit/s",
                        "tunnel CPU 0.41 core, 3.2 CPU-s per Gbit"),
                       RecommendedRates(37_500_000, 82_900_000))]
    if kind == "mtu":
        return [Progress(0.5, "probing", "DF pings 1420..1280"),
                Result("mtu", True, None, ("path MTU through the tunnel: 1420 (ok)",))]
    return [Result(kind, False, error=f"unknown test {kind!r}")]


class UnavailableRunner:
    """Until the real runner is wired in: says so instead of pretending."""

    def start(self, kind: str, options: Mapping[str, Any]) -> Iterator[Event]:
        yield Result(kind, False, error="self-tests are not available in this build yet "
                     "(use `keel selftest` from a shell)")
