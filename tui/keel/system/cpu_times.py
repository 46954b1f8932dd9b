"""CPU time per core and in total: /proc/stat, the one reader."""

from __future__ import annotations

from keel.parse.procstat import CpuTimes, parse_proc_stat
from keel.system.source import RealSource, Source

PROC_STAT = "/proc/stat"


def read_cpu_times(source: Source | None = None) -> dict[str, CpuTimes]:
    """Ticks per CPU ("cpu" is the total); SourceError when unreadable."""
    return parse_proc_stat((source or RealSource()).read_text(PROC_STAT))
