"""Processes: whether one still runs, by pid, by its pidfile or by its
command line."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

PROC = "/proc"


def pid_alive(pid: int) -> bool:
    return Path(f"{PROC}/{pid}").exists()


def keel_runs_as(pid: int, proc: Path = Path(PROC)) -> bool:
    """Process `pid` runs and is a keel command (`keel upgrade`, the console
    UI): a pid taken over by another program does not count."""
    try:
        argv = (proc / str(pid) / "cmdline").read_bytes().split(b"\0")
    except OSError:
        return False
    return any(os.path.basename(a.decode(errors="replace")) == "keel" for a in argv)


def runs_with(pid: int, words: tuple[str, ...], proc: Path = Path(PROC)) -> bool:
    """Process `pid` runs with these words, in order, in its command line (a
    daemon keel apply started: `python3 -m keel.cli fleet watch`); a pid taken
    over by another program does not count."""
    try:
        argv = [a.decode(errors="replace")
                for a in (proc / str(pid) / "cmdline").read_bytes().split(b"\0")]
    except OSError:
        return False
    n = len(words)
    return any(tuple(argv[i:i + n]) == words for i in range(len(argv) - n + 1))


def pidfile_pid(pidfile: str) -> int | None:
    """The pid a daemon wrote, or None (no file, not a number)."""
    try:
        return int(Path(pidfile).read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def commands(proc: Path = Path(PROC)) -> Iterator[tuple[tuple[str, ...], int]]:
    """Each process's command line and controlling terminal (tty_nr, field 7
    of /proc/<pid>/stat; 0: none); those that end meanwhile are left out."""
    for entry in proc.glob("[0-9]*"):
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
            tty = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[4])
        except (OSError, IndexError, ValueError):
            continue
        yield tuple(a.decode(errors="replace") for a in argv if a), tty


def runs(argv: tuple[str, ...], words: tuple[str, ...]) -> bool:
    """`argv` is the command `words` (a program, then its arguments), maybe
    through an interpreter (`python3 /usr/bin/keel apply --boot`), maybe with
    more arguments after them."""
    program, *rest = words
    for i, arg in enumerate(argv):
        if os.path.basename(arg) == program and list(argv[i + 1:i + 1 + len(rest)]) == rest:
            return True
    return False


def running(words: tuple[str, ...], proc: Path = Path(PROC)) -> bool:
    """A process runs the command `words` (see runs)."""
    return any(runs(argv, words) for argv, _ in commands(proc))
