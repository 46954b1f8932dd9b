"""/proc/<pid>/stat of kernel workers: the CPU time of WireGuard's crypt workers.

The kernel names a worker `kworker/N:M+wg-crypt-wg0` while it runs a work item
of that workqueue and `kworker/N:M-wg-crypt-wg0` after: the name tells the
*latest* workqueue only, so the attribution is approximate.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class TaskTime:
    pid: int
    comm: str
    utime: int  # clock ticks
    stime: int
    start_ticks: int = 0  # when the task was born, in clock ticks since boot

    @property
    def ticks(self) -> int:
        return self.utime + self.stime


def parse_pid_stat(line: str) -> TaskTime:
    """One /proc/<pid>/stat line. comm may hold spaces and parentheses."""
    open_paren, close_paren = line.index("("), line.rindex(")")
    pid = int(line[:open_paren])
    comm = line[open_paren + 1:close_paren]
    fields = line[close_paren + 2:].split()
    # fields[0] is field 3 (state); utime and stime are fields 14 and 15,
    # starttime field 22
    return TaskTime(pid=pid, comm=comm, utime=int(fields[11]), stime=int(fields[12]),
                    start_ticks=int(fields[19]))


@dataclass(frozen=True)
class KworkerReading:
    """Every kernel worker at one read, and when the read began (clock ticks
    since boot; None when unknown)."""

    tasks: dict[int, TaskTime]
    at_ticks: int | None


def crypt_ticks_between(before: KworkerReading, after: KworkerReading) -> int:
    """Ticks the wg-crypt workers spent between two reads of every kworker.

    The one rule (the UI's CPU panel and the throughput self-test both use it):
    a worker counts when either read names wg-crypt (a name tells only the
    latest work item). A worker seen only at the second read counts whole if
    it was born after the first read began, and not at all otherwise: its time
    before is not this interval's."""
    ticks = 0
    for pid, task in after.tasks.items():
        old = before.tasks.get(pid)
        if old is None:
            born_between = before.at_ticks is not None and task.start_ticks >= before.at_ticks
            if born_between and "wg-crypt-" in task.comm:
                ticks += task.ticks
        elif "wg-crypt-" in task.comm or "wg-crypt-" in old.comm:
            ticks += max(0, task.ticks - old.ticks)
    return ticks
