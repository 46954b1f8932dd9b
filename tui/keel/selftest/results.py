"""What a self-test finds: the typed results of the throughput, bufferbloat and
MTU tests, each turned into a JSON object and back (`as_dict`, `from_dict`)."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from keel.selftest.grading import LatencyStats, rpm_label


@dataclass(frozen=True)
class PhaseResult:
    name: str
    tunnel: LatencyStats
    outside: LatencyStats | None
    increase_p50_ms: float | None  # over idle; None for the idle phase
    increase_p95_ms: float | None
    grade: str | None
    down_mbit: float | None
    up_mbit: float | None
    window: tuple[float, float] = (0.0, 0.0)  # epoch seconds the phase was measured

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> PhaseResult:
        outside = d.get("outside")
        return cls(**(d | {"tunnel": LatencyStats(**d["tunnel"]),
                           "outside": LatencyStats(**outside) if outside else None,
                           "window": tuple(d.get("window", (0.0, 0.0)))}))


@dataclass(frozen=True)
class BufferbloatResult:
    phases: tuple[PhaseResult, ...]
    increase_ms: float
    grade: str
    rpm: float
    cake_bypassed: bool

    def phase(self, name: str) -> PhaseResult:
        for p in self.phases:
            if p.name == name:
                return p
        raise KeyError(name)

    @property
    def rpm_label(self) -> str:
        return rpm_label(self.rpm)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self) | {"rpm_label": self.rpm_label}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> BufferbloatResult:
        return cls(phases=tuple(PhaseResult.from_dict(p) for p in d["phases"]),
                   increase_ms=d["increase_ms"], grade=d["grade"], rpm=d["rpm"],
                   cake_bypassed=d["cake_bypassed"])


@dataclass(frozen=True)
class ThroughputPhase:
    name: str
    down_mbit: float
    up_mbit: float
    retransmits: int | None
    cpu_local_pct: float
    cpu_remote_pct: float
    tunnel_cpu_seconds: float
    seconds_per_gigabit: float | None
    core_busy: dict[str, float]  # per core, 0..1
    cpu_bound: bool


@dataclass(frozen=True)
class ThroughputResult:
    phases: tuple[ThroughputPhase, ...]
    recommend_down_kbit: int
    recommend_up_kbit: int

    @property
    def cpu_bound(self) -> bool:
        return any(p.cpu_bound for p in self.phases)

    def phase(self, name: str) -> ThroughputPhase:
        return next(p for p in self.phases if p.name == name)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self) | {"cpu_bound": self.cpu_bound}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> ThroughputResult:
        return cls(phases=tuple(ThroughputPhase(**p) for p in d["phases"]),
                   recommend_down_kbit=d["recommend_down_kbit"],
                   recommend_up_kbit=d["recommend_up_kbit"])


@dataclass(frozen=True)
class MtuResult:
    wan_interface_mtu: int
    wan_path_mtu: int | None
    tunnel_interface_mtu: int
    tunnel_path_mtu: int
    recommended_tunnel_mtu: int | None

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> MtuResult:
        return cls(**d)


TestResult = ThroughputResult | BufferbloatResult | MtuResult
