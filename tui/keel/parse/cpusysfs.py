"""cpufreq and cpuidle sysfs, read as `path=value` lines (what a collector
gathers from /sys/devices/system/cpu/)."""

from __future__ import annotations

import re
from dataclasses import dataclass

_FREQ = re.compile(r"/cpu(\d+)/cpufreq/(\w+)$")
_IDLE = re.compile(r"/cpu(\d+)/cpuidle/state(\d+)/(\w+)$")


@dataclass(frozen=True)
class CpuFreq:
    cpu: int
    governor: str
    cur_khz: int
    max_khz: int
    min_khz: int


@dataclass(frozen=True)
class IdleState:
    cpu: int
    index: int
    name: str
    latency_us: int
    usage: int
    time_us: int
    disabled: bool


def _pairs(text: str) -> list[tuple[str, str]]:
    return [tuple(line.split("=", 1)) for line in text.splitlines() if "=" in line]  # type: ignore[misc]


def parse_cpufreq(text: str) -> dict[int, CpuFreq]:
    """Per CPU; empty when the hardware or hypervisor gives no cpufreq."""
    raw: dict[int, dict[str, str]] = {}
    for path, value in _pairs(text):
        m = _FREQ.search(path)
        if m:
            raw.setdefault(int(m[1]), {})[m[2]] = value.strip()
    return {
        cpu: CpuFreq(cpu, f.get("scaling_governor", ""), int(f.get("scaling_cur_freq", 0)),
                     int(f.get("scaling_max_freq", 0)), int(f.get("scaling_min_freq", 0)))
        for cpu, f in sorted(raw.items())
    }


def parse_cpuidle(text: str) -> tuple[str, list[IdleState]]:
    """(driver, states); driver "none" (or "") means no idle states to manage."""
    driver = ""
    raw: dict[tuple[int, int], dict[str, str]] = {}
    for path, value in _pairs(text):
        if path.endswith("/cpuidle/current_driver"):
            driver = value.strip()
            continue
        m = _IDLE.search(path)
        if m:
            raw.setdefault((int(m[1]), int(m[2])), {})[m[3]] = value.strip()
    states = [
        IdleState(cpu, idx, s.get("name", ""), int(s.get("latency", 0)), int(s.get("usage", 0)),
                  int(s.get("time", 0)), s.get("disable", "0") == "1")
        for (cpu, idx), s in sorted(raw.items())
    ]
    return driver, states
