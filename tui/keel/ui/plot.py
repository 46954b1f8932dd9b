"""The live latency plot: RTT through the tunnel and to the peer outside it.

Drawn by hand (no Sparkline, no plotext): one column per `bucket` seconds
holding the worst RTT of the bucket, 'x' where a probe was lost, dashed lines
at the grade boundaries (idle + 5/30/60 ms). The y axis is piecewise linear so
each grade band gets a quarter of the height.

On the console profile the plot *sweeps* (like a patient monitor): a new
column overwrites the oldest in place, so one second costs a couple of
terminal columns, not a full redraw of the plot.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

from rich.segment import Segment
from rich.style import Style
from textual.geometry import Region, Size
from textual.strip import Strip
from textual.widget import Widget

from keel.metrics.snapshots import LatencySnapshot
from keel.parse.ping import LatencySample
from keel.thresholds import GRADE_LINES_MS

SERIES = ("tunnel", "outside")
ASCII_GLYPHS = {"tunnel": "*", "outside": "o", "loss": "x", "line": "-"}
RICH_GLYPHS = {"tunnel": "\u25cf", "outside": "\u25cb", "loss": "x", "line": "\u00b7"}
STYLES = {"tunnel": "bold cyan", "outside": "yellow", "loss": "bold red", "line": "bright_black",
          "label": "bright_black", "": ""}
NICE_TOPS = (100, 150, 200, 300, 500, 1000, 2000, 5000, 10000)
LABEL_WIDTH = 5


@dataclass
class Cell:
    rtt: float | None = None  # worst RTT in the bucket
    lost: bool = False


class PlotModel:
    """Pure model: cells by bucket, the scale, and what needs repainting."""

    def __init__(self, bucket: float = 1.0, sweep: bool = False, ascii_only: bool = True,
                 width: int = 80, height: int = 6) -> None:
        self.bucket, self.sweep = bucket, sweep
        self.glyphs = ASCII_GLYPHS if ascii_only else RICH_GLYPHS
        self.cells: dict[str, dict[int, Cell]] = {s: {} for s in SERIES}
        self.cur: int | None = None
        self.baseline = 0.0
        self.top = float(NICE_TOPS[0])
        self._full = True
        self._dirty: set[int] = set()
        self._grid: list[list[tuple[str, str]]] | None = None  # [x][y] glyphs
        self._runs: dict[int, list[tuple[str, str]]] = {}
        self._points: list[float] = []
        self._line_rows: dict[int, float] = {}
        self.resize(width, height)

    # --- geometry -------------------------------------------------------
    def resize(self, width: int, height: int) -> None:
        self.width, self.height = max(width, LABEL_WIDTH + 2), max(height, 2)
        self.cols = self.width - LABEL_WIDTH
        self._scale_changed()

    def _scale_changed(self) -> None:
        self._full = True
        self._grid = None
        self._runs.clear()
        self._points = [0.0, *(self.baseline + g for g in GRADE_LINES_MS),
                        max(self.top, self.baseline + 61)]
        self._line_rows = {}
        for g in GRADE_LINES_MS:
            self._line_rows.setdefault(self.row(self.baseline + g - 1e-9), g)

    def column(self, bucket: int) -> int | None:
        if self.cur is None or bucket > self.cur or bucket <= self.cur - self.cols + (
                1 if self.sweep else 0):
            return None
        if self.sweep:
            return bucket % self.cols
        return self.cols - 1 - (self.cur - bucket)

    def gap_column(self) -> int | None:
        return None if self.cur is None or not self.sweep else (self.cur + 1) % self.cols

    # --- scale --------------------------------------------------------------
    def fraction(self, value: float) -> float:
        """0 at the bottom, 1 at the top; each grade band gets a quarter."""
        points = self._points
        for i in range(4):
            lo, hi = points[i], points[i + 1]
            if value <= hi:
                return (i + (value - lo) / (hi - lo)) / 4 if hi > lo else i / 4
        return 1.0

    def row(self, value: float) -> int:
        """Screen row (0 = top) of a value; above the top clips to row 0."""
        up = min(self.height - 1, int(self.fraction(value) * self.height))
        return self.height - 1 - up

    def line_rows(self) -> dict[int, float]:
        return self._line_rows

    # --- data -----------------------------------------------------------
    def add(self, series: str, samples: Iterable[LatencySample]) -> None:
        cells = self.cells[series]
        for s in samples:
            b = math.floor(s.sent / self.bucket)
            cell = cells.setdefault(b, Cell())
            if s.rtt_ms is None:
                cell.lost = True
            else:
                cell.rtt = s.rtt_ms if cell.rtt is None else max(cell.rtt, s.rtt_ms)
            self._dirty.add(b)

    def advance(self, now: float) -> None:
        cur = math.floor(now / self.bucket)
        if self.cur is not None and cur <= self.cur:
            return
        if self.cur is None or not self.sweep or cur - self.cur >= self.cols:
            self._full = True
        else:
            self._dirty.update(range(self.cur + 1, cur + 2))
        self.cur = cur
        keep = cur - self.cols - 1
        for cells in self.cells.values():
            for b in [b for b in cells if b < keep]:
                del cells[b]
        self._rescale()

    def set_baseline(self, ms: float | None) -> None:
        value = 0.0 if ms is None else round(ms)  # whole ms: redraws stay rare
        if value != self.baseline:
            self.baseline = value
            self._scale_changed()

    def _rescale(self) -> None:
        worst = max((c.rtt for cells in self.cells.values() for c in cells.values()
                     if c.rtt is not None), default=0.0)
        need = max(worst * 1.1, self.baseline + 100)
        top = float(next((t for t in NICE_TOPS if t >= need), NICE_TOPS[-1]))
        if top != self.top:
            self.top = top
            self._scale_changed()

    def take_dirty(self) -> set[int] | None:
        """Columns to repaint, or None for everything."""
        self._runs.clear()
        if self._full:
            self._full = False
            self._dirty.clear()
            self._grid = None
            return None
        cols = {c for b in self._dirty if (c := self.column(b)) is not None}
        if (gap := self.gap_column()) is not None and self._dirty:
            cols.add(gap)
        self._dirty.clear()
        if self._grid is not None:
            for x in cols:
                self._grid[x] = self._column(x)
        return cols

    def _column(self, x: int) -> list[tuple[str, str]]:
        return [self.glyph(x, y) for y in range(self.height)]

    # --- rendering ------------------------------------------------------
    def label(self, y: int) -> str:
        lines = self.line_rows()
        if y == 0:
            text = f"{self.top:.0f}"
        elif y in lines:
            text = f"+{lines[y]:.0f}"
        elif y == self.height - 1:
            text = "ms"
        else:
            text = ""
        return text.rjust(LABEL_WIDTH - 1) + " "

    def glyph(self, x: int, y: int) -> tuple[str, str]:
        """(character, style key) at data column x, row y."""
        if self.cur is None or x == self.gap_column():
            return " ", ""
        if self.sweep:
            bucket = self.cur - ((self.cur - x) % self.cols)
        else:
            bucket = self.cur - (self.cols - 1 - x)
        for series in SERIES:  # the tunnel wins a shared cell
            cell = self.cells[series].get(bucket)
            if cell is None:
                continue
            if cell.rtt is not None and self.row(cell.rtt) == y:
                return self.glyphs[series], series
            if cell.lost and y == 0:
                return self.glyphs["loss"], "loss"
        if y in self.line_rows() and x % 2 == 0:
            return self.glyphs["line"], "line"
        return " ", ""

    def runs(self, y: int) -> list[tuple[str, str]]:
        """Row y as (text, style key) runs: few style changes per line."""
        if self._full or self._dirty:
            self._grid = None  # read before take_dirty(): paint from scratch
            self._runs.clear()
        cached = self._runs.get(y)
        if cached is not None:
            return cached
        if self._grid is None:
            self._grid = [self._column(x) for x in range(self.cols)]
        runs: list[tuple[str, str]] = [(self.label(y), "label")]
        for x in range(self.cols):
            ch, style = self._grid[x][y]
            if ch == " ":
                style = runs[-1][1]  # spaces join the run before: no style switch
            if style == runs[-1][1]:
                runs[-1] = (runs[-1][0] + ch, style)
            else:
                runs.append((ch, style))
        self._runs[y] = runs
        return runs

    def lines(self) -> list[str]:
        return ["".join(t for t, _ in self.runs(y)) for y in range(self.height)]


class LatencyPlot(Widget):
    """The widget: feeds snapshots to a PlotModel, repaints only dirty columns."""

    DEFAULT_CSS = "LatencyPlot { height: 1fr; min-height: 3; }"

    def __init__(self, bucket: float = 1.0, sweep: bool = False, ascii_only: bool = True,
                 **kwargs) -> None:
        super().__init__(**kwargs)
        self.model = PlotModel(bucket, sweep, ascii_only)
        self._styles: dict[str, Style] = {}

    def on_resize(self) -> None:
        self.model.resize(self.size.width, self.size.height)
        self.refresh()

    def show(self, snapshot: LatencySnapshot) -> None:
        for series in snapshot.series:
            if series.name in self.model.cells:
                self.model.add(series.name, series.new)
        tunnel = snapshot.get("tunnel")
        self.model.set_baseline(tunnel.idle_ms if tunnel else None)
        self.model.advance(snapshot.now)
        dirty = self.model.take_dirty()
        if dirty is None:
            self.refresh()
        else:
            for x in sorted(dirty):
                self.refresh(Region(LABEL_WIDTH + x, 0, 1, self.model.height))

    def _style(self, key: str) -> Style:
        if key not in self._styles:
            base = self.rich_style
            self._styles[key] = base + Style.parse(STYLES[key]) if STYLES[key] else base
        return self._styles[key]

    def on_unmount(self) -> None:
        self._styles.clear()

    def render_line(self, y: int) -> Strip:
        if y >= self.model.height:
            return Strip.blank(self.size.width, self.rich_style)
        segments = [Segment(text, self._style(key)) for text, key in self.model.runs(y)]
        return Strip(segments).adjust_cell_length(self.size.width, self.rich_style)

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return self.model.height
