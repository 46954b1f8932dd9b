"""The tunnel's rates over the last minute or so: Textual's Sparkline widget,
with two changes to its drawing. The bars start at zero (a rate of 4 Mbit/s
under a peak of 40 is a low bar, not the window's minimum drawn as nothing),
one column per `seconds` of history, newest at the right; and on the console
the bars are drawn with glyphs of the VGA font: '_' and the lower half and
full blocks (profile.CONSOLE_BLOCKS), not the eighth blocks it lacks."""

from __future__ import annotations

import math
from collections.abc import Sequence

from rich.console import Console, ConsoleOptions, RenderResult
from rich.segment import Segment
from rich.style import Style
from textual.renderables.sparkline import Sparkline as SparklineRenderable
from textual.widgets import Sparkline

from keel.ui.profile import CONSOLE_BLOCKS

CONSOLE_BARS = "_" + CONSOLE_BLOCKS  # _ then half and full blocks: 3 levels a row
MODERN_BARS = SparklineRenderable.BARS  # the eighth blocks: 8 levels a row


def columns(data: Sequence[float], width: int, seconds: int) -> list[float | None]:
    """The newest `width` columns, each the highest of `seconds` samples,
    newest at the right; None where the history does not reach."""
    cols: list[float | None] = []
    end = len(data)
    for _ in range(width):
        start = end - seconds
        if start < 0:
            break
        cols.append(max(data[start:end]))
        end = start
    cols.reverse()
    return [None] * (width - len(cols)) + cols


class ZeroBars(SparklineRenderable):
    """Bars from zero to the window's highest value, one style for all (a
    bar's colour does not change as it ages: a scroll repaints no styles),
    after a label on the first row."""

    def __init__(self, data: Sequence[float], *, width: int, height: int, seconds: int,
                 bars: str, style: Style, label: str = "", label_style: Style | None = None
                 ) -> None:
        super().__init__(data, width=width, height=height)
        self.seconds, self.bars, self.style = seconds, bars, style
        self.label, self.label_style = label, label_style

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        width, height = self.width or options.max_width, self.height or 1
        width -= len(self.label)
        cols = columns(self.data, max(0, width), self.seconds)
        top = max((c for c in cols if c is not None), default=0.0)
        per_row = len(self.bars)
        levels = per_row * height
        for row in reversed(range(height)):
            text = []
            for value in cols:
                if value is None or top <= 0:
                    # no history yet: blank; no traffic: the floor
                    text.append(" " if value is None or row else self.bars[0])
                    continue
                level = min(levels - 1, math.floor(value / top * levels))  # 0 .. levels-1
                low = row * per_row
                text.append(" " if level < low else self.bars[-1] if level >= low + per_row
                            else self.bars[level - low])
            if self.label:
                first = row == height - 1
                yield Segment(self.label if first else " " * len(self.label),
                              self.label_style if first else self.style)
            yield Segment("".join(text), self.style)
            if row:
                yield Segment.line()


class RateSparkline(Sparkline):
    """Textual's Sparkline, drawn from zero in the profile's glyphs, with the
    rate now as its label ("rx 240.0M"): one widget a row, one repaint a poll."""

    DEFAULT_CSS = """
    RateSparkline { height: 1; width: 1fr; }
    """
    MINUTE = 60  # seconds the width shows at least (one sample a second)

    def __init__(self, ascii_only: bool = True, **kwargs) -> None:
        super().__init__(**kwargs)
        self.bars = CONSOLE_BARS if ascii_only else MODERN_BARS
        self.label = ""

    def show(self, data: Sequence[float], label: str) -> None:
        """New history and label; one repaint if either changed."""
        if label != self.label:
            self.label = label
            self.refresh()
        self.data = data

    @property
    def bar_width(self) -> int:
        return max(0, self.size.width - len(self.label))

    @property
    def seconds(self) -> int:
        """Samples a column: one when the width holds a minute, else enough
        that it does."""
        return max(1, math.ceil(self.MINUTE / max(1, self.bar_width)))

    def span(self) -> int:
        """Seconds of history across the width."""
        return self.seconds * self.bar_width

    def render(self) -> ZeroBars:
        _, base = self.background_colors
        color = base + (self.get_component_styles("sparkline--max-color").color
                        if self.max_color is None else self.max_color)
        return ZeroBars(self.data or [], width=self.size.width, height=self.size.height,
                        seconds=self.seconds, bars=self.bars,
                        style=self.rich_style + Style(color=color.rich_color),
                        label=self.label, label_style=self.rich_style + Style(bold=True))
