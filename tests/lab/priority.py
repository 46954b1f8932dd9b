"""How much of the host's CPU a lab lane's guests may take from the others:
a nice value for each QEMU process (KEEL_LAB_NICE, set per lane by
tests/lab/lanes.py; 0, the default, is the quiet lane's).

Two knobs, because of the kernel's autogroups: with them on (Debian's
default, /proc/sys/kernel/sched_autogroup_enabled), every session is a
scheduling group of its own, and pexpect starts each QEMU in a session of
its own, so a process's nice value only weighs it against its own threads.
The group's weight is set by writing the nice value to
/proc/<pid>/autogroup; the process's own (`nice -n`, inherited by every
thread QEMU starts) holds where autogroups are off. Raising a nice value
needs no privilege."""

from __future__ import annotations

import os
from pathlib import Path

NICE_ENV = "KEEL_LAB_NICE"  # once booted
BOOT_NICE_ENV = "KEEL_LAB_BOOT_NICE"  # from QEMU's start to the login


def lane_nice(env: dict[str, str] | None = None, name: str = NICE_ENV) -> int:
    """This process's guests' nice value (`name`: KEEL_LAB_NICE once booted,
    KEEL_LAB_BOOT_NICE while booting, that one by default), 0 to 19."""
    env = os.environ if env is None else env
    if name == BOOT_NICE_ENV and name not in env:
        name = NICE_ENV
    text = env.get(name, "0")
    try:
        nice = int(text)
    except ValueError:
        raise ValueError(f"{name}={text!r}: not a whole number") from None
    if not 0 <= nice <= 19:
        raise ValueError(f"{name}={nice}: must be 0..19")
    return nice


def boot_nice(env: dict[str, str] | None = None) -> int:
    return lane_nice(env, BOOT_NICE_ENV)


def niced(argv: list[str], nice: int) -> list[str]:
    """`argv` started at `nice` (its threads inherit it)."""
    return ["nice", "-n", str(nice), *argv] if nice else list(argv)


def set_session_nice(pid: int, nice: int, proc: Path = Path("/proc")) -> bool:
    """Weigh `pid`'s autogroup (its session's) at `nice`; False where the
    kernel has no autogroups (or the process is gone)."""
    if not nice:
        return False
    try:
        return _write_autogroup(pid, nice, proc)
    except OSError:
        return False


def _write_autogroup(pid: int, nice: int, proc: Path) -> bool:
    group = proc / str(pid) / "autogroup"
    if not group.exists():
        return False
    group.write_text(f"{nice}\n")
    return True


def set_nice(pid: int, nice: int, proc: Path = Path("/proc")) -> None:
    """Every thread of `pid` and its session's autogroup at `nice`, up or
    down (down needs root, as the lab runs); OSError if the process is gone
    or the kernel refuses."""
    for task in (proc / str(pid) / "task").iterdir():
        os.setpriority(os.PRIO_PROCESS, int(task.name), nice)
    _write_autogroup(pid, nice, proc)
