"""CPU time per core and in total: /proc/stat, the one reader."""

from __future__ import annotations

from keel.parse.procstat import CpuTimes, parse_proc_stat
from keel.system.source import RealSource, Source, SourceError

PROC_STAT = "/proc/stat"


def read_cpu_times(source: Source | None = None) -> dict[str, CpuTimes]:
    """Ticks per CPU ("cpu" is the total); SourceError when unreadable."""
    return parse_proc_stat((source or RealSource()).read_text(PROC_STAT))


def proc_stat_text(source: Source | None = None, path: str = PROC_STAT) -> str | None:
    """/proc/stat as text (for whom keeps the raw text between two reads);
    None when unreadable."""
    try:
        return (source or RealSource()).read_text(path)
    except SourceError:
        return None


def read_load_average(source: Source | None = None) -> float | None:
    """The 1-minute load average (/proc/loadavg)."""
    try:
        return float((source or RealSource()).read_text("/proc/loadavg").split()[0])
    except (SourceError, ValueError, IndexError):
        return None
