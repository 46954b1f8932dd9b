"""The tunnel's rates over the last minute or so: Textual's Sparkline widget,
with two changes to its drawing. The bars start at zero (a rate of 4 Mbit/s
under a peak of 40 is a low bar, not the window's minimum drawn as nothing),
one column per `seconds` of history, newest at the right; and on the console
the bars are drawn with glyphs of the VGA font: '_' and the lower half and
full blocks (profile.CONSOLE_BLOCKS), not the eighth blocks it lacks."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from rich.segment import Segment
from rich.style import Style
from textual.strip import Strip
from textual.widgets import Sparkline

from keel.ui.bars import CONSOLE_BARS, MODERN_BARS, bar_rows


class RateSparkline(Sparkline):
    """Textual's Sparkline, drawn from zero in the profile's glyphs, with the
    rate now as its label ("rx 240.0M") on its first row: one widget a row,
    one repaint a poll. Its lines are built here as two segments each (the
    label, the bars; one style for every bar: a bar's colour does not change
    as it ages, so a scroll repaints no styles), not through a Rich
    renderable."""

    DEFAULT_CSS = """
    RateSparkline { height: 1; width: 1fr; }
    """
    MINUTE = 60  # seconds the width shows at least (one sample a second)

    def __init__(self, ascii_only: bool = True, **kwargs) -> None:
        super().__init__(**kwargs)
        self.bars = CONSOLE_BARS if ascii_only else MODERN_BARS
        self.label = ""
        self._styles: tuple[Style, Style, Style] | None = None  # base, bars, label
        self._drawn: tuple[Any, ...] = ()
        self._rows: list[Strip] = []

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

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._styles = None
        self._drawn = ()

    def _bar_styles(self) -> tuple[Style, Style, Style]:
        if self._styles is None:
            _, background = self.background_colors
            color = background + (self.get_component_styles("sparkline--max-color").color
                                  if self.max_color is None else self.max_color)
            base = self.rich_style
            self._styles = (base, base + Style(color=color.rich_color), base + Style(bold=True))
        return self._styles

    def render_line(self, y: int) -> Strip:
        width, height = self.size
        drawn = (self.data, self.label, width, height, self.max_color)
        if drawn != self._drawn:
            base, bar, bold = self._bar_styles()
            pad = " " * len(self.label)
            rows = bar_rows(self.data or [], width - len(self.label), height, self.seconds,
                            self.bars)
            # every bar glyph is one cell wide: the strip's length is known
            # without asking the width of each cell
            self._rows = [Strip([Segment(self.label if i == 0 else pad, bold if i == 0 else bar),
                                 Segment(row, bar)], len(self.label) + len(row))
                          .adjust_cell_length(width, base) for i, row in enumerate(rows)]
            self._drawn = drawn
        if y < len(self._rows):
            return self._rows[y]
        return Strip.blank(width, self._bar_styles()[0])
