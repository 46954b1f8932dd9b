"""The live latency plot: RTT through the tunnel and to the peer outside it.

Drawn by hand (Textual has no scatter plot): one column per `bucket` seconds
holding the worst RTT of the bucket, 'x' where a probe was lost, dashed lines
at the grade boundaries (idle + keel.thresholds.GRADE_LINES_MS), each named at
the right edge. The y axis is linear in ms from 0: every row is `step` ms
(1, 2, 5 times a power of ten), a value is drawn on the row whose label is at
or below it, and the labels are ticks of the same scale. The last row is the
time axis: seconds ago, and "now" where the newest column is.

On the console profile the plot *sweeps* (like a patient monitor): a new
column overwrites the oldest in place, so one second costs a couple of
terminal columns and the time axis row, not a full redraw of the plot; the
axis's labels travel with the sweep.
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
# the console's glyphs are ASCII (the VGA font has them all)
ASCII_GLYPHS = {"tunnel": "*", "outside": "o", "loss": "x", "line": "-",
                "y_axis": "|", "x_axis": "-", "tick": "+", "corner": "+"}
RICH_GLYPHS = {"tunnel": "\u25cf", "outside": "\u25cb", "loss": "x", "line": "\u00b7",
               "y_axis": "\u2502", "x_axis": "\u2500", "tick": "\u253c", "corner": "\u2514"}
STYLES = {"tunnel": "bold cyan", "outside": "yellow", "loss": "bold red", "line": "bright_black",
          "label": "bright_black", "grade": "bright_black", "": ""}
# ms per row: 1, 2, 5 times a power of ten
MS_STEPS = (0.5, 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000)
LABEL_EVERY = (1, 2, 5, 10, 20, 50)  # rows between labelled ticks (labels stay multiples)
MAX_LABELS = 6
TICK_SECONDS = (1, 2, 5, 10, 15, 20, 30, 60, 120, 300, 600)  # seconds between time ticks
MIN_TICK_COLS = 10
LABEL_WIDTH = 5  # "1000|"
GRADE_WIDTH = 4  # " +60" at the right end of a grade line


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
        self.step = float(MS_STEPS[0])
        self._full = True
        self._dirty: set[int] = set()
        self._grid: list[list[tuple[str, str]]] | None = None  # [x][y] glyphs
        self._runs: dict[int, list[tuple[str, str]]] = {}
        self._line_rows: dict[int, float] = {}
        self.resize(width, height)

    # --- geometry -------------------------------------------------------
    def resize(self, width: int, height: int) -> None:
        self.width = max(width, LABEL_WIDTH + GRADE_WIDTH + 2)
        self.height = max(height, 3)
        self.rows = self.height - 1  # data rows; the last row is the time axis
        self.cols = self.width - LABEL_WIDTH - GRADE_WIDTH
        self.step = self._step()
        self._scale_changed()

    def _scale_changed(self) -> None:
        self._full = True
        self._grid = None
        self._runs.clear()
        self._line_rows = {}
        for g in GRADE_LINES_MS:  # the higher bound names a row two lines share
            self._line_rows[self.row(self.baseline + g)] = g

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
    @property
    def top(self) -> float:
        """The value where the plot ends: above it, a point clips to the top row."""
        return self.step * self.rows

    def _step(self) -> float:
        """The smallest step that shows the worst RTT and the highest grade line."""
        worst = max((c.rtt for cells in self.cells.values() for c in cells.values()
                     if c.rtt is not None), default=0.0)
        need = max(worst, self.baseline + GRADE_LINES_MS[-1]) * 1.05
        return float(next((s for s in MS_STEPS if s * self.rows > need), MS_STEPS[-1]))

    def row(self, value: float) -> int:
        """Screen row (0 = top) of a value: linear, `step` ms a row; above the
        top clips to row 0."""
        up = min(self.rows - 1, max(0, math.floor(value / self.step + 1e-9)))
        return self.rows - 1 - up

    def value(self, y: int) -> float:
        """The value at the bottom of row y (its label)."""
        return (self.rows - 1 - y) * self.step

    def label_every(self) -> int:
        return next((n for n in LABEL_EVERY if math.ceil(self.rows / n) <= MAX_LABELS),
                    LABEL_EVERY[-1])

    def ticks(self) -> dict[int, float]:
        """Labelled rows of the y axis: row -> ms."""
        every = self.label_every()
        return {y: self.value(y) for y in range(self.rows) if (self.rows - 1 - y) % every == 0}

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
            self.step = self._step()
            self._scale_changed()

    def _rescale(self) -> None:
        step = self._step()
        if step != self.step:
            self.step = step
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
        return [self.glyph(x, y) for y in range(self.rows)]

    # --- rendering ------------------------------------------------------
    def label(self, y: int) -> str:
        if y == self.rows:
            return " " * (LABEL_WIDTH - 1) + self.glyphs["corner"]
        value = self.ticks().get(y)
        text = "" if value is None else f"{value:g}"
        return text.rjust(LABEL_WIDTH - 1)[-(LABEL_WIDTH - 1):] + self.glyphs["y_axis"]

    def grade_label(self, y: int) -> str:
        g = self._line_rows.get(y)
        return (" " if g is None else f" +{g:.0f}").ljust(GRADE_WIDTH)[:GRADE_WIDTH]

    def tick_seconds(self) -> float:
        """Seconds between two time ticks: at least MIN_TICK_COLS columns apart."""
        return float(next((t for t in TICK_SECONDS if t / self.bucket >= MIN_TICK_COLS),
                          TICK_SECONDS[-1]))

    def time_axis(self) -> str:
        """The time axis under the data columns: a tick every tick_seconds(),
        each labelled with its age ("-10s"; "now" at the newest column), the
        label left of its tick; a tick whose label does not fit whole is left
        out."""
        chars = [self.glyphs["x_axis"]] * self.cols
        if self.cur is None:
            return "".join(chars)
        every = self.tick_seconds()
        ticks = []
        for i in range(int(self.cols * self.bucket / every) + 1):
            x = self.column(self.cur - round(i * every / self.bucket))
            if x is not None:
                ticks.append((x, "now" if i == 0 else f"-{i * every:g}s"))
        taken: set[int] = set()
        for x, text in ticks:
            span = range(x - len(text) - 1, x + 1)  # a space, the label, the tick
            if span.start < 0 or taken.intersection(span):
                continue
            taken.update(span)
            chars[span.start:x + 1] = " " + text + self.glyphs["tick"]
        return "".join(chars)

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
        if y in self._line_rows and x % 2 == 0:
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
        if y >= self.rows:
            runs = [(self.label(y) + self.time_axis() + " " * GRADE_WIDTH, "label")]
            self._runs[y] = runs
            return runs
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
        runs.append((self.grade_label(y), "grade"))
        self._runs[y] = runs
        return runs

    def lines(self) -> list[str]:
        return ["".join(t for t, _ in self.runs(y)) for y in range(self.height)]


class LatencyPlot(Widget):
    """The widget: feeds snapshots to a PlotModel, repaints only dirty columns."""

    DEFAULT_CSS = "LatencyPlot { height: 1fr; min-height: 4; }"

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
        before = self.model.cur
        self.model.advance(snapshot.now)
        dirty = self.model.take_dirty()
        if dirty is None:
            self.refresh()
            return
        for x in sorted(dirty):
            self.refresh(Region(LABEL_WIDTH + x, 0, 1, self.model.rows))
        if self.model.cur != before:  # the time axis's labels moved
            self.refresh(Region(LABEL_WIDTH, self.model.rows, self.model.cols, 1))

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
