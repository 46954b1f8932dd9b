"""The verdicts screen's picture: the last hour of signals (one a second) as
two column plots on a shared time axis, the CPU's stalls (the stall meter's
worst wakeup) and the tunnel's latency over its idle baseline, with the
verdicts of the window; and the export of those seconds. Pure rendering."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict
from pathlib import Path

from rich.text import Text

from keel.verdicts import Signals

LEVELS_MS = (400.0, 200.0, 100.0, 50.0, 20.0, 5.0)  # one row each, top to bottom
SPANS_S = (60, 300, 900, 3600)
LABEL = 6
EXPORT_DIRS = (Path("/data/keel/export"), Path("/run/keel/export"))


def _stall(s: Signals) -> float | None:
    return s.stall_max_ms


def _excess(s: Signals) -> float | None:
    if s.latency_tunnel_ms is None or s.latency_tunnel_idle_ms is None:
        return None
    return max(0.0, s.latency_tunnel_ms - s.latency_tunnel_idle_ms)


def _columns(history: Sequence[Signals], end: float, span: int, width: int,
             get: Callable[[Signals], float | None]) -> list[float | None]:
    """The worst value of each column's seconds (None: nothing measured)."""
    cols: list[float | None] = [None] * width
    start = end - span
    for s in history:
        if not start < s.t <= end:
            continue
        value = get(s)
        if value is None:
            continue
        i = min(width - 1, int((s.t - start) / span * width))
        cols[i] = value if cols[i] is None else max(cols[i], value)
    return cols


def _rows(title: str, cols: list[float | None], glyph: str, style: str) -> list[Text]:
    lines = [Text(title, style="bold")]
    for level in LEVELS_MS:
        line = Text(f"{level:>{LABEL - 1}.0f} ", style="bright_black")
        for value in cols:
            if value is None:
                line.append(" ")
            elif value >= level:
                line.append(glyph, style=style)
            else:
                line.append("." if level == LEVELS_MS[-1] else " ", style="bright_black")
        lines.append(line)
    return lines


def plot_lines(history: Sequence[Signals], end: float, span: int, width: int = 80,
               ascii_only: bool = True) -> list[Text]:
    """Stalls and tunnel latency, `span` seconds up to `end` (epoch seconds)."""
    cols = max(10, width - LABEL)
    glyph = "#" if ascii_only else "\u2588"
    lines = _rows("CPU stalls (worst wakeup, ms)", _columns(history, end, span, cols, _stall),
                  glyph, "bold magenta")
    lines += _rows("tunnel latency over idle (ms)", _columns(history, end, span, cols, _excess),
                   glyph, "bold cyan")
    left = time.strftime("%H:%M:%S", time.localtime(end - span))
    right = time.strftime("%H:%M:%S", time.localtime(end))
    axis = Text(" " * LABEL + left)
    axis.append(" " * max(1, cols - len(left) - len(right)) + right)
    lines.append(axis)
    return lines


def export(history: Sequence[Signals], now: float | None = None,
           dirs: Sequence[Path] | None = None) -> Path:
    """The seconds kept, as JSON Lines, in the first writable directory."""
    stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(now or time.time()))
    last: OSError | None = None
    for folder in dirs or EXPORT_DIRS:
        try:
            folder.mkdir(parents=True, exist_ok=True)
            path = folder / f"signals-{stamp}.jsonl"
            with path.open("w") as f:
                for s in history:
                    f.write(json.dumps(asdict(s), separators=(",", ":")) + "\n")
            return path
        except OSError as err:
            last = err
    raise OSError(f"no writable place for the export: {last}")
