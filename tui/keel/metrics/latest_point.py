"""The history daemon's newest point, as the metrics endpoint reads it.

`keel history-daemon` replaces LATEST whole every ten seconds with
{"point": Point.as_json(), "written": unix time, "verdicts": [{"cause": ...,
"severity": ..., "text": ...}, ...]} ("verdicts", the causes named in the
point's last second, may be missing: an older daemon). read_latest gives it
back, or None when the file is missing, too big, not that shape, or stale
(the daemon stopped, or the clock stepped): never an exception."""

from __future__ import annotations

import json
import math
import os
import stat
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from keel.history.point import Point

LATEST = Path("/run/keel/history/latest.json")
# three of the daemon's ten-second points missed: it is not running
STALE_S = 30.0
MAX_BYTES = 64 * 1024  # a point with 64 cores and 8 causes is under 10 KiB
MAX_VERDICTS = 16
MAX_NAME = 40  # characters of a cause's or a severity's name kept


@dataclass(frozen=True)
class Latest:
    """The newest point; `verdicts` the (cause, severity) named in its last
    second, worst first, or None when the file names none (then the point's
    own causes over its interval are what there is)."""

    point: Point
    written: float
    verdicts: tuple[tuple[str, str], ...] | None = None


def _verdicts(value: Any) -> tuple[tuple[str, str], ...] | None:
    if value is None:
        return None
    if not isinstance(value, list):
        raise ValueError("verdicts: not a list")
    out = []
    for v in value[:MAX_VERDICTS]:
        if not isinstance(v, dict) or not isinstance(v.get("cause"), str):
            raise ValueError("verdicts: an entry without its cause")
        severity = v.get("severity", "")
        if not isinstance(severity, str):
            raise ValueError("verdicts: a severity that is not a string")
        out.append((v["cause"][:MAX_NAME], severity[:MAX_NAME]))
    return tuple(out)


def parse_latest(data: bytes, now: float, stale_s: float = STALE_S) -> Latest | None:
    """The file's bytes as a Latest written within `stale_s` of `now` (either
    way: a time ahead of the clock is as stale as one behind it); None for
    anything else."""
    if len(data) > MAX_BYTES:
        return None
    try:
        doc = json.loads(data)
        if not isinstance(doc, dict):
            return None
        written = doc.get("written")
        if isinstance(written, bool) or not isinstance(written, int | float):
            return None
        written = float(written)
        if not math.isfinite(written) or abs(now - written) > stale_s:
            return None
        return Latest(Point.from_json(doc.get("point")), written,
                      _verdicts(doc.get("verdicts")))
    except (ValueError, TypeError, KeyError, OverflowError, RecursionError):
        return None


def read_latest(path: Path = LATEST, now: float | None = None,
                stale_s: float = STALE_S) -> Latest | None:
    """The newest point the daemon wrote to `path`, or None."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)  # a FIFO there never blocks us
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        with os.fdopen(fd, "rb") as f:
            fd = -1
            data = f.read(MAX_BYTES + 1)
    except OSError:
        return None
    finally:
        if fd >= 0:
            os.close(fd)
    return parse_latest(data, time.time() if now is None else now, stale_s)
