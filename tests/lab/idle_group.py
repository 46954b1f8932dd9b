"""A CPU cgroup whose processes get only the CPU time nobody else wants
(`cpu.idle` = 1: the group is scheduled as SCHED_IDLE, and any other task
that wakes preempts it at once), for the lanes that must step aside while
the quiet lane's `host_alone` modules measure (tests/lab/lanes.py).

    group = IdleGroup.make("keel-lab-idle")   # NoIdleGroup where there is none
    group.sweep([pid, ...])                   # those processes and their children in it
    group.release()                           # every one back where it was

Processes started by a process in the group are in it too (the kernel's
rule), so a lane's new guest steps aside as well; `sweep` again catches one
forked while the tree was being read. Where no such group can be made (no
cgroup `cpu` controller with `cpu.idle`, not root, or a cgroup v2 tree that
is not ours to divide) `make` raises NoIdleGroup, saying why: the caller
waits for the lanes to end instead."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path


def descendants(roots: Iterable[int], parents: Mapping[int, int]) -> set[int]:
    """`roots` and every process below them, from a pid -> parent pid map."""
    children: dict[int, list[int]] = {}
    for pid, ppid in parents.items():
        children.setdefault(ppid, []).append(pid)
    found: set[int] = set()
    todo = [pid for pid in roots if pid in parents]
    while todo:
        pid = todo.pop()
        if pid not in found:
            found.add(pid)
            todo += children.get(pid, [])
    return found


def parse_ppid(stat: str) -> int:
    """The parent pid from the text of /proc/<pid>/stat (the command's name,
    in parentheses, may hold spaces and parentheses: read after the last)."""
    return int(stat[stat.rindex(")") + 2:].split()[1])


def process_parents(proc: Path = Path("/proc")) -> dict[int, int]:
    """pid -> parent pid of every process now running."""
    out = {}
    for entry in proc.iterdir():
        if entry.name.isdigit():
            try:
                out[int(entry.name)] = parse_ppid((entry / "stat").read_text())
            except (OSError, ValueError, IndexError):
                continue  # gone meanwhile
    return out


def cpu_cgroup_dir(mounts: str, own_cgroup: str) -> tuple[Path, str] | None:
    """(the directory of this process's CPU cgroup, "v1" or "v2"), from the
    text of /proc/self/mounts and /proc/self/cgroup; None without one."""
    groups = {}
    for line in own_cgroup.splitlines():
        _id, controllers, path = line.split(":", 2)
        groups[controllers] = path
    for line in mounts.splitlines():
        fields = line.split()
        if len(fields) < 4:
            continue
        where, kind, options = fields[1], fields[2], fields[3].split(",")
        if kind == "cgroup" and "cpu" in options:
            path = next((p for c, p in groups.items() if "cpu" in c.split(",")), None)
            if path is not None:
                return Path(where + path.rstrip("/")) if path != "/" else Path(where), "v1"
    for line in mounts.splitlines():
        fields = line.split()
        if len(fields) >= 3 and fields[2] == "cgroup2" and "" in groups:
            path = groups[""]
            return (Path(fields[1] + path.rstrip("/")) if path != "/" else Path(fields[1])), "v2"
    return None


class NoIdleGroup(Exception):
    """No idle CPU group can be made here; the message says why."""


@dataclass
class IdleGroup:
    path: Path  # the idle group's directory
    home: Path  # the group its processes came from, and go back to

    @classmethod
    def make(cls, name: str) -> IdleGroup:
        try:
            found = cpu_cgroup_dir(Path("/proc/self/mounts").read_text(),
                                   Path("/proc/self/cgroup").read_text())
        except OSError as err:
            raise NoIdleGroup(f"cannot read this process's cgroups: {err}") from None
        if found is None:
            raise NoIdleGroup("no cgroup with the cpu controller is mounted")
        home, version = found
        if version == "v2" and not cls._v2_root_with_cpu(home):
            raise NoIdleGroup(f"{home}: a cgroup v2 group other than the root with the cpu "
                             "controller (not ours to divide)")
        path = home / name
        try:
            path.mkdir(exist_ok=True)
            (path / "cpu.idle").write_text("1\n")
        except OSError as err:
            raise NoIdleGroup(f"{path}: {err.strerror or err}") from None
        return cls(path, home)

    @staticmethod
    def _v2_root_with_cpu(home: Path) -> bool:
        """The root of a cgroup v2 tree (no cgroup.type there) that hands the
        cpu controller to its children."""
        try:
            return not (home / "cgroup.type").exists() and \
                "cpu" in (home / "cgroup.subtree_control").read_text().split()
        except OSError:
            return False

    def sweep(self, roots: Iterable[int]) -> int:
        """Move `roots` and their descendants into the group; how many moved
        (a process that ended meanwhile is skipped)."""
        mine = self.members()
        moved = 0
        for pid in sorted(descendants(roots, process_parents()) - mine):
            try:
                (self.path / "cgroup.procs").write_text(f"{pid}\n")
                moved += 1
            except OSError:
                continue
        return moved

    def members(self) -> set[int]:
        try:
            return {int(p) for p in (self.path / "cgroup.procs").read_text().split()}
        except OSError:
            return set()

    def release(self) -> None:
        """Every process back in the group it came from; the group removed."""
        for _ in range(3):  # (a process forked while moving: again)
            for pid in sorted(self.members()):
                try:
                    (self.home / "cgroup.procs").write_text(f"{pid}\n")
                except OSError:
                    continue
        with contextlib.suppress(OSError):  # (a process that would not move)
            os.rmdir(self.path)
