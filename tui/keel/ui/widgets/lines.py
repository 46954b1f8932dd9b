"""A widget of text lines that repaints only the characters that changed."""

from __future__ import annotations

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.geometry import Region, Size
from textual.strip import Strip
from textual.widget import Widget


def _changed_span(old: str, new: str) -> tuple[int, int] | None:
    """First and one-past-last differing column of two lines, or None."""
    if old == new:
        return None
    n = max(len(old), len(new))
    old, new = old.ljust(n), new.ljust(n)
    start = next(i for i in range(n) if old[i] != new[i])
    end = n
    while end > start and old[end - 1] == new[end - 1]:
        end -= 1
    return start, end


class LinesPanel(Widget):
    """Shows a list of rich Text lines (ASCII content). `set_lines` compares
    with what is shown and refreshes only the changed spans: on a serial line
    an unchanged panel costs nothing and a ticking number a few bytes."""

    DEFAULT_CSS = "LinesPanel { height: auto; }"

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self._lines: list[Text] = []
        self._strips: dict[int, Strip] = {}
        self._base: Style | None = None  # rich_style walks the ancestors: once

    @property
    def plain_lines(self) -> list[str]:
        return [t.plain for t in self._lines]

    @property
    def text(self) -> str:
        return "\n".join(self.plain_lines)

    def set_lines(self, lines: list[Text]) -> None:
        old = self._lines
        self._lines = lines
        if len(old) != len(lines):
            self._strips.clear()
            self.refresh(layout=True)
            return
        regions = []
        for y, (a, b) in enumerate(zip(old, lines, strict=True)):
            if a.spans != b.spans or a.style != b.style:
                span = (0, max(len(a.plain), len(b.plain), self.size.width))
            else:
                span = _changed_span(a.plain, b.plain)
            if span is None:
                continue
            self._strips.pop(y, None)
            start, end = span
            regions.append(Region(start, y, max(1, end - start), 1))
        if regions:  # one refresh for them all: one round of Textual's bookkeeping
            self.refresh(*regions)

    def on_resize(self) -> None:
        self._strips.clear()

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._strips.clear()
        self._base = None

    @property
    def base_style(self) -> Style:
        if self._base is None:
            self._base = self.rich_style
        return self._base

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return len(self._lines)

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        if y >= len(self._lines):
            return Strip.blank(width, self.base_style)
        strip = self._strips.get(y)
        if strip is None or strip.cell_length != width:
            base, line = self.base_style, self._lines[y]
            segments = list(Segment.apply_style(line.render(self.app.console), base))
            length = line.cell_len  # known: the strip need not measure its segments
            if length <= width:
                if length < width:
                    segments.append(Segment(" " * (width - length), base))
                strip = Strip(segments, width)
            else:
                strip = Strip(segments, length).crop(0, width)
            self._strips[y] = strip
        return strip
