"""The kernel's workers and their CPU time: every /proc/<pid>/stat whose
comm is kworker/..., with the time of the read (what
keel.parse.kworkers.crypt_ticks_between needs to count a worker born between
two reads)."""

from __future__ import annotations

import os

from keel.parse.kworkers import KworkerReading, TaskTime, parse_pid_stat
from keel.system.source import RealSource, Source, SourceError

HZ = os.sysconf("SC_CLK_TCK")


def uptime_ticks(source: Source, hz: int = HZ) -> int | None:
    """Clock ticks since boot (the unit of a task's start time)."""
    try:
        return int(float(source.read_text("/proc/uptime").split()[0]) * hz)
    except (SourceError, ValueError, IndexError):
        return None


def read_kworkers(source: Source | None = None, hz: int = HZ) -> KworkerReading:
    """Every kernel worker's CPU time, by pid, read now (one scan of /proc:
    one read per process, its stat line naming it)."""
    source = source or RealSource()
    at = uptime_ticks(source, hz)
    tasks: dict[int, TaskTime] = {}
    try:
        pids = [p for p in source.listdir("/proc") if p.isdigit()]
    except SourceError:
        pids = []
    for pid in pids:
        try:
            task = parse_pid_stat(source.read_text(f"/proc/{pid}/stat"))
        except (SourceError, ValueError, IndexError):
            continue  # gone since the listing
        if task.comm.startswith("kworker/"):
            tasks[task.pid] = task
    return KworkerReading(tasks, at)
