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

NICE_ENV = "KEEL_LAB_NICE"


def lane_nice(env: dict[str, str] | None = None) -> int:
    """This process's guests' nice value: KEEL_LAB_NICE, 0 to 19."""
    text = (os.environ if env is None else env).get(NICE_ENV, "0")
    try:
        nice = int(text)
    except ValueError:
        raise ValueError(f"{NICE_ENV}={text!r}: not a whole number") from None
    if not 0 <= nice <= 19:
        raise ValueError(f"{NICE_ENV}={nice}: must be 0..19")
    return nice


def niced(argv: list[str], nice: int) -> list[str]:
    """`argv` started at `nice` (its threads inherit it)."""
    return ["nice", "-n", str(nice), *argv] if nice else list(argv)


def set_session_nice(pid: int, nice: int, proc: Path = Path("/proc")) -> bool:
    """Weigh `pid`'s autogroup (its session's) at `nice`; False where the
    kernel has no autogroups (or the process is gone)."""
    if not nice:
        return False
    try:
        (proc / str(pid) / "autogroup").write_text(f"{nice}\n")
    except OSError:
        return False
    return True
