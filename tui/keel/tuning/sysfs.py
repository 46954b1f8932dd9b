"""Reading cpufreq/cpuidle sysfs into the `path=value` text keel.parse.cpusysfs reads."""

from __future__ import annotations

from pathlib import Path

CPU_ROOT = Path("/sys/devices/system/cpu")

FREQ_FILES = ("scaling_governor", "scaling_cur_freq", "scaling_max_freq", "scaling_min_freq",
              "scaling_available_governors")
IDLE_FILES = ("name", "latency", "usage", "time", "disable")


def _read(path: Path) -> str | None:
    try:
        return path.read_text().strip()
    except OSError:
        return None


def dump_cpu_sysfs(root: Path = CPU_ROOT) -> str:
    """cpufreq and cpuidle files of every CPU, one `path=value` line each."""
    lines = []
    for name in ("current_driver", "current_governor"):
        value = _read(root / "cpuidle" / name)
        if value is not None:
            lines.append(f"{root}/cpuidle/{name}={value}")
    for cpu in sorted(root.glob("cpu[0-9]*"), key=lambda p: int(p.name[3:])):
        for name in FREQ_FILES:
            value = _read(cpu / "cpufreq" / name)
            if value is not None:
                lines.append(f"{cpu}/cpufreq/{name}={value}")
        for state in sorted(cpu.glob("cpuidle/state[0-9]*")):
            for name in IDLE_FILES:
                value = _read(state / name)
                if value is not None:
                    lines.append(f"{state}/{name}={value}")
    return "\n".join(lines) + "\n"
