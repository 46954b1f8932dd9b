"""The stall meter's log: one JSON line per second in /run/keel/stall.jsonl.

The meter appends; past MAX_LINES lines the file is rewritten atomically (temp
file + os.replace) with the last KEEP_LINES, so it stays bounded (a few MB at
most) and a reader never sees half a rewrite. Readers read the tail only.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Iterator
from pathlib import Path

from keel.stall.summary import StallSecond

DEFAULT_PATH = Path("/run/keel/stall.jsonl")
MAX_LINES = 7200  # two hours of seconds
KEEP_LINES = 3600  # the last hour survives a trim
BLOCK = 64 * 1024


def _count_lines(path: Path) -> int:
    try:
        with path.open("rb") as f:
            return sum(block.count(b"\n") for block in iter(lambda: f.read(BLOCK), b""))
    except FileNotFoundError:
        return 0


class StallLog:
    """Appends StallSeconds to `path`, trimming it when it grows past max_lines."""

    def __init__(self, path: Path | str = DEFAULT_PATH, *, max_lines: int = MAX_LINES,
                 keep_lines: int = KEEP_LINES) -> None:
        if not 0 < keep_lines <= max_lines:
            raise ValueError("need 0 < keep_lines <= max_lines")
        self.path = Path(path)
        self.max_lines = max_lines
        self.keep_lines = keep_lines
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.lines = _count_lines(self.path)
        self._end_line()

    def _end_line(self) -> None:
        """A line left unfinished (the meter was killed mid-write) is closed, so
        the next record does not glue onto it."""
        try:
            with self.path.open("rb+") as f:
                if f.seek(0, os.SEEK_END) == 0:
                    return
                f.seek(-1, os.SEEK_END)
                if f.read(1) != b"\n":
                    f.write(b"\n")
                    self.lines += 1
        except FileNotFoundError:
            pass

    def append(self, second: StallSecond) -> None:
        line = json.dumps(second.as_dict(), separators=(",", ":")) + "\n"
        with self.path.open("a") as f:
            f.write(line)
        self.lines += 1
        if self.lines > self.max_lines:
            self.trim()

    def trim(self) -> None:
        """Rewrite the file with its last keep_lines lines, atomically."""
        tail = _tail_lines(self.path, self.keep_lines)
        tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        try:
            with tmp.open("wb") as f:
                f.writelines(line + b"\n" for line in tail)
            os.replace(tmp, self.path)
        finally:
            with contextlib.suppress(FileNotFoundError):
                tmp.unlink()
        self.lines = len(tail)


def _reverse_lines(path: Path) -> Iterator[bytes]:
    """The file's non-empty lines, last first, reading BLOCK bytes at a time from
    the end (a last line still being written comes out unfinished: the JSON
    reader skips it)."""
    with path.open("rb") as f:
        pos = f.seek(0, os.SEEK_END)
        head = b""  # the start of the earliest line read so far: maybe incomplete
        while pos > 0:
            step = min(BLOCK, pos)
            pos -= step
            f.seek(pos)
            lines = (f.read(step) + head).split(b"\n")
            head = lines[0]
            for line in reversed(lines[1:]):
                if line:
                    yield line
        if head:
            yield head


def _tail_lines(path: Path, n: int) -> list[bytes]:
    out: list[bytes] = []
    for line in _reverse_lines(path):
        out.append(line)
        if len(out) >= n:
            break
    out.reverse()
    return out


def read_recent(path: Path | str = DEFAULT_PATH, seconds: float = 60.0,
                now: float | None = None) -> list[StallSecond]:
    """The seconds logged in the last `seconds` before `now` (default: the wall
    clock), oldest first. Reads from the end of the file only as far back as
    needed; bad lines are skipped; a missing file gives []."""
    now = time.time() if now is None else now
    since = now - seconds
    found: list[StallSecond] = []
    try:
        for line in _reverse_lines(Path(path)):
            try:
                second = StallSecond.from_dict(json.loads(line))
            except (ValueError, KeyError, TypeError):
                continue
            if second.t <= since:
                break
            if second.t <= now:
                found.append(second)
    except FileNotFoundError:
        return []
    found.reverse()
    return found
