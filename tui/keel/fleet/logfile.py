"""The fleet daemons' logs on /run (RAM): a line appended with the time,
the file kept under a bound (past it, the older half is dropped), so a
daemon that says something every poll for months never fills the memory."""

from __future__ import annotations

import time
from pathlib import Path

MAX_LOG = 256 * 1024  # bytes


def append(path: Path, line: str, most: int = MAX_LOG,
           clock=time.gmtime) -> None:
    """`line` (one line: the caller escapes what came from outside) with
    the UTC time; raises OSError when the file cannot be written."""
    if path.exists() and path.stat().st_size > most:
        path.write_bytes(path.read_bytes()[-most // 2:])
    with open(path, "a") as log:
        log.write(f"{time.strftime('%Y-%m-%dT%H:%M:%SZ', clock())} {line}\n")
