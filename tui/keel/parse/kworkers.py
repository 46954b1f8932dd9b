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

    @property
    def ticks(self) -> int:
        return self.utime + self.stime


def parse_pid_stat(line: str) -> TaskTime:
    """One /proc/<pid>/stat line. comm may hold spaces and parentheses."""
    open_paren, close_paren = line.index("("), line.rindex(")")
    pid = int(line[:open_paren])
    comm = line[open_paren + 1:close_paren]
    fields = line[close_paren + 2:].split()
    # fields[0] is field 3 (state); utime and stime are fields 14 and 15
    return TaskTime(pid=pid, comm=comm, utime=int(fields[11]), stime=int(fields[12]))


def crypt_ticks_between(before: dict[int, TaskTime], after: dict[int, TaskTime]) -> int:
    """Ticks the wg-crypt workers spent between two reads of *every* kworker
    (by pid): a worker counts when either read names wg-crypt (a name tells
    only the latest work item), and a worker born in between counts whole."""
    ticks = 0
    for pid, task in after.items():
        old = before.get(pid)
        if old is None:
            if "wg-crypt-" in task.comm:
                ticks += task.ticks
        elif "wg-crypt-" in task.comm or "wg-crypt-" in old.comm:
            ticks += max(0, task.ticks - old.ticks)
    return ticks
