"""/proc/stat: per-CPU time in USER_HZ ticks, and busy shares between two reads."""

from __future__ import annotations

from dataclasses import dataclass

FIELDS = ("user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal")


@dataclass(frozen=True)
class CpuTimes:
    cpu: str  # "cpu" for the sum, "cpu0", "cpu1", ...
    user: int
    nice: int
    system: int
    idle: int
    iowait: int
    irq: int
    softirq: int
    steal: int

    @property
    def total(self) -> int:
        return sum(getattr(self, f) for f in FIELDS)


@dataclass(frozen=True)
class CpuShare:
    """Shares (0..1) of one CPU's time between two reads."""

    cpu: str
    user: float
    system: float
    softirq: float
    irq: float
    steal: float
    idle: float
    ticks: int

    @property
    def busy(self) -> float:
        return max(0.0, 1.0 - self.idle)


def parse_proc_stat(text: str) -> dict[str, CpuTimes]:
    """The cpu lines of /proc/stat. guest time is already inside user/nice."""
    cpus: dict[str, CpuTimes] = {}
    for line in text.splitlines():
        parts = line.split()
        if not parts or not parts[0].startswith("cpu"):
            continue
        values = [int(v) for v in parts[1:9]]
        values += [0] * (8 - len(values))  # very old kernels lack steal
        cpus[parts[0]] = CpuTimes(parts[0], *values)
    return cpus


def shares(before: dict[str, CpuTimes], after: dict[str, CpuTimes]) -> dict[str, CpuShare]:
    """Per-CPU shares of time between two parses (CPUs in both reads only)."""
    result: dict[str, CpuShare] = {}
    for name, b in before.items():
        a = after.get(name)
        if a is None:
            continue
        ticks = a.total - b.total
        if ticks <= 0:
            continue

        def share(field: str, a: CpuTimes = a, b: CpuTimes = b, ticks: int = ticks) -> float:
            return max(0, getattr(a, field) - getattr(b, field)) / ticks

        result[name] = CpuShare(
            cpu=name,
            user=share("user") + share("nice"),
            system=share("system"),
            softirq=share("softirq"),
            irq=share("irq"),
            steal=share("steal"),
            idle=share("idle") + share("iowait"),
            ticks=ticks,
        )
    return result
