"""The boot timeline: each boot step's start and end in seconds since the
kernel started (CLOCK_BOOTTIME, the clock of /proc/uptime), one JSON object
a line in /run/keel/boot.jsonl. The initramfs and rcS write their marks in
shell; `keel apply --boot` adds one per step it runs, so the file says when
the firewall was loaded, the LAN served and the tunnel made.

`parse` is pure: a line that is not a mark is skipped (the file is keel's own,
but a power cut can leave half a line)."""

from __future__ import annotations

import json
import math
import time
from dataclasses import dataclass
from pathlib import Path

TIMELINE = Path("/run/keel/boot.jsonl")
MAX_LINES = 2000  # a boot writes a few dozen


@dataclass(frozen=True)
class Mark:
    step: str
    start: float | None  # None: before /proc was mounted (read as the previous end)
    end: float

    @property
    def seconds(self) -> float | None:
        return None if self.start is None else max(0.0, self.end - self.start)

    def as_dict(self) -> dict[str, object]:
        return {"step": self.step, "start": self.start, "end": self.end}


def boottime() -> float:
    """Seconds since the kernel started, on the clock the shell marks read."""
    return round(time.clock_gettime(time.CLOCK_BOOTTIME), 2)


def _number(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) and value >= 0 else None


def parse(text: str) -> list[Mark]:
    """The marks of a timeline file, in the order written."""
    marks = []
    for line in text.splitlines()[:MAX_LINES]:
        try:
            obj = json.loads(line)
        except ValueError:
            continue
        if not isinstance(obj, dict) or not isinstance(obj.get("step"), str):
            continue
        end = _number(obj.get("end"))
        if end is None:
            continue
        start = _number(obj.get("start"))
        marks.append(Mark(obj["step"][:80], start, end))
    return marks


def append(mark: Mark, path: Path = TIMELINE) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as f:
        f.write(json.dumps(mark.as_dict()) + "\n")


def read(path: Path = TIMELINE) -> list[Mark]:
    try:
        return parse(path.read_text(errors="replace"))
    except OSError:
        return []
