"""The live latency plot: RTT through the tunnel and to the peer outside it.

Drawn by hand (Textual has no scatter plot): one column per `bucket` seconds
holding the worst RTT of the bucket, 'x' where a probe was lost, dashed lines
at the grade boundaries (idle + keel.thresholds.GRADE_LINES_MS), each named at
the right edge. The y axis is linear in ms from 0: every row is `step` ms
(1, 2, 5 times a power of ten), a value is drawn on the row whose label is at
or below it, and the labels are ticks of the same scale. The last row is the
time axis: seconds ago, in order, "now" at the newest column.

The plot scrolls: the newest column is the rightmost, and each new bucket
shifts the rest left. The columns are drawn once per change (one list of runs
a row, few style switches) and repainted as one region: the data rows between
the labels; the labels and the time axis (its ticks sit at fixed ages) stay as
they are until the scale or the size changes.
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


# what a change needs repainted (PlotModel.take_change)
NOTHING, DATA, ALL = 0, 1, 2


@dataclass
class Cell:
    rtt: float | None = None  # worst RTT in the bucket
    lost: bool = False


class PlotModel:
    """Pure model: cells by bucket, the scale, and what needs repainting."""

    def __init__(self, bucket: float = 1.0, ascii_only: bool = True,
                 width: int = 80, height: int = 6) -> None:
        self.bucket = bucket
        self.glyphs = ASCII_GLYPHS if ascii_only else RICH_GLYPHS
        self.cells: dict[str, dict[int, Cell]] = {s: {} for s in SERIES}
        self.cur: int | None = None
        self.baseline = 0.0
        self.step = float(MS_STEPS[0])
        self._change = ALL
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
        self._changed(ALL)
        self._line_rows = {}
        for g in GRADE_LINES_MS:  # the higher bound names a row two lines share
            self._line_rows[self.row(self.baseline + g)] = g

    def _changed(self, what: int) -> None:
        self._change = max(self._change, what)
        self._runs.clear()

    def column(self, bucket: int) -> int | None:
        """The data column of a bucket (the newest is the last), None when it
        is not shown."""
        if self.cur is None or not self.cur - self.cols < bucket <= self.cur:
            return None
        return self.cols - 1 - (self.cur - bucket)

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
            if self.column(b) is not None or self.cur is None or b > self.cur:
                self._changed(DATA)

    def advance(self, now: float) -> None:
        cur = math.floor(now / self.bucket)
        if self.cur is not None and cur <= self.cur:
            return
        self._changed(ALL if self.cur is None else DATA)  # the first: the axis's labels
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

    def take_change(self) -> int:
        """What changed since the last call: NOTHING, DATA (the data columns)
        or ALL (the labels and the time axis too)."""
        change, self._change = self._change, NOTHING
        return change

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
        each labelled with its age, oldest left ("-60s" ... "-10s", "now" at
        the newest column), the label left of its tick; a tick whose label
        does not fit whole is left out. The ticks sit at fixed ages: the axis
        does not move as the plot scrolls."""
        chars = [self.glyphs["x_axis"]] * self.cols
        if self.cur is None:
            return "".join(chars)
        every = self.tick_seconds()
        taken: set[int] = set()
        for i in range(int(self.cols * self.bucket / every) + 1):
            x = self.cols - 1 - round(i * every / self.bucket)
            text = "now" if i == 0 else f"-{i * every:g}s"
            span = range(x - len(text) - 1, x + 1)  # a space, the label, the tick
            if span.start < 0 or taken.intersection(span):
                continue
            taken.update(span)
            chars[span.start:x + 1] = " " + text + self.glyphs["tick"]
        return "".join(chars)

    def _points(self) -> dict[int, dict[int, tuple[str, str]]]:
        """Row -> column -> (character, style key) of every point and loss shown."""
        points: dict[int, dict[int, tuple[str, str]]] = {}
        if self.cur is None:
            return points
        for series in reversed(SERIES):  # the tunnel, drawn last, wins a shared cell
            for bucket, cell in self.cells[series].items():
                x = self.column(bucket)
                if x is None:
                    continue
                if cell.lost:
                    points.setdefault(0, {})[x] = (self.glyphs["loss"], "loss")
                if cell.rtt is not None:
                    points.setdefault(self.row(cell.rtt), {})[x] = (self.glyphs[series], series)
        return points

    def _background(self, y: int) -> str:
        """Row y's data columns where no point is: the grade line's dashes
        (every other column, fixed on the screen), or blanks."""
        if y not in self._line_rows:
            return " " * self.cols
        return "".join(self.glyphs["line"] if x % 2 == 0 else " " for x in range(self.cols))

    def _paint(self) -> None:
        """Every row's runs: the background between the points, a run per
        style (blanks join the run before them: no style switch)."""
        points = self._points()
        for y in range(self.rows):
            background = self._background(y)
            gap_style = "line" if y in self._line_rows else ""
            row = points.get(y, {})
            pieces: list[tuple[str, str]] = []
            start = 0
            for x in sorted(row):
                pieces += [(background[start:x], gap_style), row[x]]
                start = x + 1
            pieces.append((background[start:], gap_style))
            runs: list[tuple[str, str]] = []
            text, style = [self.label(y)], "label"  # the run being built
            for piece, key in pieces:
                blanks = len(piece) - len(piece.lstrip(" "))
                if key == style or blanks == len(piece):
                    text.append(piece)
                    continue
                text.append(piece[:blanks])
                runs.append(("".join(text), style))
                text, style = [piece[blanks:]], key
            runs.append(("".join(text), style))
            runs.append((self.grade_label(y), "grade"))
            self._runs[y] = runs
        self._runs[self.rows] = [(self.label(self.rows) + self.time_axis()
                                  + " " * GRADE_WIDTH, "label")]

    def runs(self, y: int) -> list[tuple[str, str]]:
        """Row y as (text, style key) runs: few style changes per line."""
        if not self._runs:
            self._paint()
        return self._runs[y]

    def lines(self) -> list[str]:
        return ["".join(t for t, _ in self.runs(y)) for y in range(self.height)]


class LatencyPlot(Widget):
    """The widget: feeds snapshots to a PlotModel; repaints the data columns
    when the data moved, everything when the scale did."""

    DEFAULT_CSS = "LatencyPlot { height: 1fr; min-height: 4; }"

    def __init__(self, bucket: float = 1.0, ascii_only: bool = True, **kwargs) -> None:
        super().__init__(**kwargs)
        self.model = PlotModel(bucket, ascii_only)
        self._styles: dict[str, Style] = {}  # rich_style walks the ancestors: once

    def on_resize(self) -> None:
        self.model.resize(self.size.width, self.size.height)
        self.refresh()

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._styles.clear()

    def show(self, snapshot: LatencySnapshot) -> None:
        for series in snapshot.series:
            if series.name in self.model.cells:
                self.model.add(series.name, series.new)
        tunnel = snapshot.get("tunnel")
        self.model.set_baseline(tunnel.idle_ms if tunnel else None)
        self.model.advance(snapshot.now)
        change = self.model.take_change()
        if change == ALL:
            self.refresh()
        elif change == DATA:  # the data rows between their labels
            self.refresh(Region(LABEL_WIDTH, 0, self.model.cols, self.model.rows))

    def _style(self, key: str) -> Style:
        style = self._styles.get(key)
        if style is None:
            if not STYLES[key]:
                style = self.rich_style
            else:
                style = self._style("") + Style.parse(STYLES[key])
            self._styles[key] = style
        return style

    def on_unmount(self) -> None:
        self._styles.clear()

    def render_line(self, y: int) -> Strip:
        width, base = self.size.width, self._style("")
        if y >= self.model.height:
            return Strip.blank(width, base)
        segments = [Segment(text, self._style(key)) for text, key in self.model.runs(y)]
        return Strip(segments).adjust_cell_length(width, base)

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return self.model.height
