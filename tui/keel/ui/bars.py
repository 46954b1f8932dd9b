"""Bar glyph rows of a rate history: the columns (one per `seconds` of
history, newest at the right) and the rows of bars drawn from zero, in the
glyphs a profile has. Pure text: the dashboard's sparklines and the CAKE
panel draw them."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from keel.ui.profile import CONSOLE_BLOCKS

CONSOLE_BARS = "_" + CONSOLE_BLOCKS  # _ then half and full blocks: 3 levels a row
# the eighth blocks (Textual's Sparkline draws these): 8 levels a row
MODERN_BARS = "\u2581\u2582\u2583\u2584\u2585\u2586\u2587\u2588"


def columns(data: Sequence[float], width: int, seconds: int,
            agg: Callable[[Sequence[float]], float] = max,
            partial: bool = False) -> list[float | None]:
    """The newest `width` columns, each the highest (or `agg`) of `seconds`
    samples, newest at the right; None where the history does not reach
    (`partial`: the oldest samples make a column of their own, fewer than
    `seconds`: a history shorter than a column still shows)."""
    cols: list[float | None] = []
    if seconds == 1:  # a sample a column (the console's 80 columns)
        cols = list(data[-width:]) if width else []
        return [None] * (width - len(cols)) + cols
    end = len(data)
    for _ in range(width):
        start = end - seconds
        if partial and end > 0:
            start = max(0, start)
        if start < 0:
            break
        cols.append(agg(data[start:end]))
        end = start
    cols.reverse()
    return [None] * (width - len(cols)) + cols


def bar_rows(data: Sequence[float], width: int, height: int, seconds: int,
             bars: str, top: float | None = None,
             agg: Callable[[Sequence[float]], float] = max, partial: bool = False) -> list[str]:
    """The bars, top row first: from zero to the window's highest value (or
    `top`: two sparklines on one scale), `len(bars)` levels a row; blank where
    the history does not reach, the lowest bar on the bottom row where there
    was no traffic."""
    cols = columns(data, max(0, width), seconds, agg, partial)
    if top is None:
        top = max((c for c in cols if c is not None), default=0.0)
    per_row = len(bars)
    levels = per_row * height
    rows = []
    for row in reversed(range(height)):
        text = []
        for value in cols:
            if value is None or top <= 0:
                # no history yet: blank; no traffic: the floor
                text.append(" " if value is None or row else bars[0])
                continue
            level = min(levels - 1, math.floor(value / top * levels))  # 0 .. levels-1
            low = row * per_row
            text.append(" " if level < low else bars[-1] if level >= low + per_row
                        else bars[level - low])
        rows.append("".join(text))
    return rows
