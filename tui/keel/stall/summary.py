"""One second of the stall meter, summarised (pure: no clock, no files).

The meter's threads record how late each 10 ms sleep came back (seconds, >= 0).
Once a second those lists, two /proc/stat texts and the second's length become
one `StallSecond`: per CPU and over all CPUs the number of samples, the p99 and
the max lateness and their sum ("stalled ms"), and the steal rate over that
second (None when /proc/stat could not be read).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from keel.parse.procstat import parse_proc_stat, shares


@dataclass(frozen=True)
class CpuStall:
    cpu: int
    samples: int
    p99_ms: float
    max_ms: float
    stalled_ms: float

    def as_dict(self) -> dict[str, Any]:
        return {"cpu": self.cpu, "samples": self.samples, "p99_ms": self.p99_ms,
                "max_ms": self.max_ms, "stalled_ms": self.stalled_ms}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> CpuStall:
        if not isinstance(data, Mapping):
            raise TypeError(f"a CPU's stall is a JSON object, not {type(data).__name__}")
        return cls(cpu=int(data["cpu"]), samples=int(data["samples"]),
                   p99_ms=float(data["p99_ms"]), max_ms=float(data["max_ms"]),
                   stalled_ms=float(data["stalled_ms"]))


@dataclass(frozen=True)
class StallSecond:
    t: float  # wall clock (epoch seconds) at the end of the second
    per_cpu: tuple[CpuStall, ...]
    p99_ms: float  # over the samples of all CPUs together
    max_ms: float
    stalled_ms: float  # sum over all CPUs
    steal: float | None  # share 0..1 of all CPUs' time; None if unreadable
    realtime: bool  # every meter thread got SCHED_FIFO
    interval_s: float = 1.0  # the second's real length (monotonic)

    @property
    def samples(self) -> int:
        return sum(c.samples for c in self.per_cpu)

    def as_dict(self) -> dict[str, Any]:
        return {"t": self.t, "per_cpu": [c.as_dict() for c in self.per_cpu],
                "p99_ms": self.p99_ms, "max_ms": self.max_ms, "stalled_ms": self.stalled_ms,
                "steal": self.steal, "realtime": self.realtime, "interval_s": self.interval_s}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> StallSecond:
        """Raises KeyError/TypeError/ValueError on a malformed record."""
        if not isinstance(data, Mapping):
            raise TypeError(f"a stall second is a JSON object, not {type(data).__name__}")
        steal = data.get("steal")
        return cls(t=float(data["t"]),
                   per_cpu=tuple(CpuStall.from_dict(c) for c in data["per_cpu"]),
                   p99_ms=float(data["p99_ms"]), max_ms=float(data["max_ms"]),
                   stalled_ms=float(data["stalled_ms"]),
                   steal=None if steal is None else float(steal),
                   realtime=bool(data["realtime"]),
                   interval_s=float(data.get("interval_s", 1.0)))


def p99(values: Sequence[float]) -> float:
    """Nearest-rank 99th percentile (0 for no values): of 100 samples the 2nd largest."""
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[max(0, math.ceil(0.99 * len(ordered)) - 1)]


def _ms(seconds: float) -> float:
    return round(seconds * 1000.0, 3)


def steal_between(stat_before: str | None, stat_after: str | None) -> float | None:
    """Steal share (0..1) of all CPUs' time between two /proc/stat texts."""
    if not stat_before or not stat_after:
        return None
    try:
        total = shares(parse_proc_stat(stat_before), parse_proc_stat(stat_after)).get("cpu")
    except ValueError:
        return None
    return None if total is None else round(total.steal, 4)


def steal_reported(stat_text: str | None) -> bool:
    """Whether this kernel/hypervisor accounts steal at all: the steal column
    exists and has moved since boot. Many hypervisors (and software emulation)
    never report any; there steal 0 % means "unknown", not "none"."""
    if not stat_text:
        return False
    try:
        total = parse_proc_stat(stat_text).get("cpu")
    except ValueError:
        return False
    return total is not None and total.steal > 0


def summarise(lateness: Mapping[int, Sequence[float]], stat_before: str | None,
              stat_after: str | None, interval_s: float, *, t: float,
              realtime: bool) -> StallSecond:
    """lateness: CPU number -> how late each sleep of this second came back (seconds).
    stat_before/stat_after: /proc/stat at the second's start and end (None if
    unreadable). interval_s: the second's real length; steal is None if it is not
    positive. t: wall clock at the end of the second."""
    per_cpu: list[CpuStall] = []
    pooled: list[float] = []
    for cpu in sorted(lateness):
        late = lateness[cpu]
        pooled.extend(late)
        per_cpu.append(CpuStall(cpu=cpu, samples=len(late), p99_ms=_ms(p99(late)),
                                max_ms=_ms(max(late, default=0.0)),
                                stalled_ms=_ms(math.fsum(late))))
    steal = steal_between(stat_before, stat_after) if interval_s > 0 else None
    return StallSecond(t=t, per_cpu=tuple(per_cpu), p99_ms=_ms(p99(pooled)),
                       max_ms=_ms(max(pooled, default=0.0)),
                       stalled_ms=_ms(math.fsum(pooled)), steal=steal,
                       realtime=realtime, interval_s=round(interval_s, 4))
