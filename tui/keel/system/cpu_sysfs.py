"""The CPU clock and idle states in force: cpufreq and cpuidle sysfs (one
file list, one reader) and the PM QoS limit, as a CpuTuning. Where there is
no cpufreq or cpuidle (most VMs) the hypervisor manages them."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass

from keel.parse.cpusysfs import CpuFreq, IdleState, parse_cpufreq, parse_cpuidle
from keel.system.pm_qos import read_pm_qos
from keel.system.source import RealSource, Source, SourceError

CPU_SYSFS = "/sys/devices/system/cpu"
FREQ_FILES = ("scaling_governor", "scaling_cur_freq", "scaling_max_freq", "scaling_min_freq",
              "scaling_available_governors")
IDLE_FILES = ("name", "latency", "usage", "time", "disable")


@dataclass(frozen=True)
class CpuTuning:
    """What is in force now."""

    freq: dict[int, CpuFreq]
    idle_driver: str
    idle_states: tuple[IdleState, ...]
    pm_qos_us: int | None  # the system-wide CPU latency limit in force

    @property
    def has_cpufreq(self) -> bool:
        return bool(self.freq)

    @property
    def has_cpuidle(self) -> bool:
        return self.idle_driver not in ("", "none") and bool(self.idle_states)

    @property
    def managed_by_hypervisor(self) -> bool:
        return not self.has_cpufreq and not self.has_cpuidle

    def states_allowed(self) -> list[IdleState]:
        """Idle states the kernel may still enter: enabled and within PM QoS."""
        limit = self.pm_qos_us
        return [s for s in self.idle_states
                if not s.disabled and (limit is None or s.latency_us <= limit)]


def cpu_sysfs_text(source: Source | None = None, root: str = CPU_SYSFS) -> str:
    """cpufreq and cpuidle files of every CPU as `path=value` lines (what
    keel.parse.cpusysfs reads)."""
    source = source or RealSource()
    lines = []

    def add(path: str) -> None:
        with contextlib.suppress(SourceError):
            lines.append(f"{path}={source.read_text(path).strip()}")

    add(f"{root}/cpuidle/current_driver")
    add(f"{root}/cpuidle/current_governor")
    try:
        cpus = sorted((n for n in source.listdir(root) if n[:3] == "cpu" and n[3:].isdigit()),
                      key=lambda n: int(n[3:]))
    except SourceError:
        cpus = []
    for cpu in cpus:
        for name in FREQ_FILES:
            add(f"{root}/{cpu}/cpufreq/{name}")
        try:
            states = sorted((s for s in source.listdir(f"{root}/{cpu}/cpuidle")
                             if s.startswith("state") and s[5:].isdigit()),
                            key=lambda s: int(s[5:]))
        except SourceError:
            states = []
        for state in states:
            for name in IDLE_FILES:
                add(f"{root}/{cpu}/cpuidle/{state}/{name}")
    return "\n".join(lines) + "\n"


def read_tuning(source: Source | None = None, root: str = CPU_SYSFS,
                pm_qos: Callable[[], int | None] = read_pm_qos) -> CpuTuning:
    text = cpu_sysfs_text(source, root)
    driver, states = parse_cpuidle(text)
    return CpuTuning(parse_cpufreq(text), driver, tuple(states), pm_qos())


def cpuinfo_mhz(source: Source | None = None) -> float | None:
    """The mean clock /proc/cpuinfo reports (where there is no cpufreq)."""
    try:
        text = (source or RealSource()).read_text("/proc/cpuinfo")
    except SourceError:
        return None
    values = [float(line.split(":", 1)[1]) for line in text.splitlines()
              if line.startswith("cpu MHz") and ":" in line]
    return sum(values) / len(values) if values else None
