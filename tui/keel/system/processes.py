"""Processes: whether one still runs, by pid or by its pidfile."""

from __future__ import annotations

from pathlib import Path

PROC = "/proc"


def pid_alive(pid: int) -> bool:
    return Path(f"{PROC}/{pid}").exists()


def pidfile_pid(pidfile: str) -> int | None:
    """The pid a daemon wrote, or None (no file, not a number)."""
    try:
        return int(Path(pidfile).read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None
