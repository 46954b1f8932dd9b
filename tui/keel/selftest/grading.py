"""Latency statistics and the bufferbloat grade (DSLReports bands, also used
by the LibreQoS test page): the increase of latency under load over idle."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from keel.thresholds import GRADE_BANDS


def percentile(values: Sequence[float], pct: float) -> float:
    """Linear-interpolated percentile (pct in 0..100) of a non-empty sequence."""
    if not values:
        raise ValueError("percentile of no values")
    if not 0 <= pct <= 100:
        raise ValueError(f"percentile {pct} outside 0..100")
    ordered = sorted(values)
    rank = (len(ordered) - 1) * pct / 100
    low, high = math.floor(rank), math.ceil(rank)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def grade(increase_ms: float) -> str:
    """A+ < 5 ms, A < 30, B < 60, C < 200, D < 400, else F."""
    for bound, letter in GRADE_BANDS:
        if increase_ms < bound:
            return letter
    return "F"


def rpm(loaded_rtt_ms: float) -> float:
    """Round-trips per minute at the loaded RTT (IETF responsiveness)."""
    if loaded_rtt_ms <= 0:
        raise ValueError("RTT must be positive")
    return 60_000.0 / loaded_rtt_ms


def rpm_label(value: float) -> str:
    return "Low" if value < 200 else "Medium" if value < 1000 else "High"


@dataclass(frozen=True)
class LatencyStats:
    samples: int
    lost: int
    p50_ms: float
    p95_ms: float
    p99_ms: float

    @property
    def loss(self) -> float:
        return self.lost / self.samples if self.samples else 0.0


def latency_stats(rtts_ms: Sequence[float | None]) -> LatencyStats:
    """Statistics of a phase's probes; None marks a lost probe."""
    got = [r for r in rtts_ms if r is not None]
    lost = len(rtts_ms) - len(got)
    if not got:
        nan = float("nan")
        return LatencyStats(len(rtts_ms), lost, nan, nan, nan)
    return LatencyStats(len(rtts_ms), lost, percentile(got, 50), percentile(got, 95),
                        percentile(got, 99))
