"""The tunnel's CPU cost from tick and byte deltas, and the CPU warnings."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from keel.metrics.snapshots import TunnelCost
from keel.parse.procstat import CpuShare, CpuTimes
from keel.thresholds import CORE_SATURATED, OTHERS_IDLE, STEAL_WARN


def cpu_seconds(ticks: int, hz: int) -> float:
    if hz <= 0:
        raise ValueError("hz must be positive")
    return ticks / hz


def tunnel_cost(before: Mapping[str, CpuTimes], after: Mapping[str, CpuTimes],
                crypt_ticks: int, tunnel_bytes: int | None, hz: int) -> TunnelCost | None:
    """Softirq ticks of all CPUs plus the wg-crypt workers' ticks between two
    /proc/stat reads. Wall time comes from the ticks themselves (total ticks of
    all CPUs / number of CPUs), so no clock is needed.

    A worker's own time also holds the softirq work that ran on its back, which
    /proc/stat already counts as softirq; what is left of it is kernel time,
    which /proc/stat counts as system. So the workers count at most the system
    time of the same interval: the cost never exceeds softirq + system."""
    cpus = [name for name in after if name != "cpu" and name in before]
    if not cpus:
        return None
    softirq = sum(max(0, after[c].softirq - before[c].softirq) for c in cpus)
    system = sum(max(0, after[c].system - before[c].system) for c in cpus)
    crypt_ticks = min(max(0, crypt_ticks), system)
    total = sum(max(0, after[c].total - before[c].total) for c in cpus)
    if total <= 0:
        return None
    wall = total / len(cpus) / hz
    return TunnelCost(
        softirq_seconds=cpu_seconds(softirq, hz),
        crypt_seconds=cpu_seconds(crypt_ticks, hz),
        wall_seconds=wall,
        ncpus=len(cpus),
        tunnel_bytes=None if tunnel_bytes is None else max(0, tunnel_bytes),
    )


def _hot_core(shares: Mapping[str, CpuShare]) -> str | None:
    cores = {k: v for k, v in shares.items() if k != "cpu"}
    if len(cores) < 2:
        return None
    for name, share in cores.items():
        others = [v for k, v in cores.items() if k != name]
        if share.softirq > CORE_SATURATED and all(o.idle > OTHERS_IDLE for o in others):
            return name
    return None


def cpu_warnings(history: Sequence[Mapping[str, CpuShare]], hold: int = 3) -> tuple[str, ...]:
    """Warnings that held for the last `hold` reads: one core saturated by
    softirq while the others idle; steal time above 10 %."""
    recent = list(history)[-hold:]
    if len(recent) < hold:
        return ()
    warnings = []
    hot = {_hot_core(s) for s in recent}
    if len(hot) == 1 and None not in hot:
        core = hot.pop()
        pct = min(s[core].softirq for s in recent) * 100
        warnings.append(f"{core} softirq {pct:.0f}% while the other cores idle: "
                        "one core carries the tunnel (RPS/queues?)")
    steals = [s["cpu"].steal for s in recent if "cpu" in s]
    if len(steals) == hold and min(steals) > STEAL_WARN:
        warnings.append(f"steal {min(steals) * 100:.0f}%: the hypervisor takes this VM's CPU "
                        "(shared/burstable instance?)")
    return tuple(warnings)
