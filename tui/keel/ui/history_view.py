"""The history screen's picture ([y], keel.ui.screens.history), pure: the
router's kept points and events (keel.history.point) over a day, a week or a
month, as columns on one time axis.

- `build_view` buckets the points into columns (the worst p95 through the
  tunnel and outside it, the mean rates, the causes named with their seconds)
  and finds the bands: maximal runs of adjacent columns whose dominant cause
  other than "healthy" is the same (a cause dominates a column when it was
  named for at least CAUSE_SHARE of the seconds the column's points cover,
  or for CAUSE_SECONDS: a bad minute stays visible in a day's or a month's
  column of many minutes),
  each with its times and a line in words made from its points; the events go
  to the column of their time.
- `items` are what the selection moves along: the bands and the columns with
  events, in the axis's order.
- `chart_lines` draws it in the glyphs a profile has (the console: ASCII and
  the VGA font's half and full blocks), `detail_lines` says an item in words.

Times are UTC (the router's clock). Every text from outside (a cause's name,
the evidence, an event's words) goes through keel.shown.shown."""

from __future__ import annotations

import math
import textwrap
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime

from rich.text import Text

from keel.history.point import WAYS, Event, Point
from keel.shown import shown
from keel.ui.bars import CONSOLE_BARS, MODERN_BARS

# what the screen is given: (since, until) -> the points and events kept in it
Loader = Callable[[float, float], tuple[Sequence[Point], Sequence[Event]]]


class NoHistory(Exception):
    """A loader's word that there is no history to read (no store yet, or
    none that opens): the screen shows the message in place of the view."""


NO_HISTORY = "no history yet: the history daemon keeps it from boot (S42history)"

SPANS = {"day": 86_400, "week": 7 * 86_400, "month": 30 * 86_400}
LABEL = 6  # the left labels' width: "  100|"
CAUSE_SHARE = 0.3  # of a column's seconds, for a cause to count for it
CAUSE_SECONDS = 20  # ... or this many seconds named, whatever the column's length
HEALTHY = "healthy"
# a cause (keel.verdicts.CAUSES) -> its letter on the band row, and in words
CAUSES = {
    "starved": ("S", "the VPS starved the router"),
    "cpu_bound": ("C", "CPU-bound"),
    "bloat": ("B", "bufferbloat"),
    "far_end": ("F", "the far end answered late"),
    "tunnel_path": ("T", "latency in the tunnel only"),
    "clock": ("K", "a low CPU clock"),
    "idle": ("I", "deep idle states allowed"),
    "line_dropped": ("L", "the line dropped"),
}
UNKNOWN_CAUSE = "?"  # a cause this version does not know (a newer keel's)
# an event's kind (keel.history.point.EVENT_KINDS) -> its mark on the event row, in words
EVENTS = {
    "boot": ("b", "boot"),
    "apply": ("a", "config applied"),
    "upgrade": ("u", "upgrade"),
    "handshake_lost": ("x", "handshake lost"),
    "handshake_back": ("h", "handshake back"),
    "rate_change": ("r", "rate change"),
    "history_gap": ("g", "gap in the history"),
}
UNKNOWN_EVENT = "?"
SEVERAL_EVENTS = "+"  # a column with events of several kinds
# ms a plot row: fine steps, for a plot of a few rows
MS_STEPS = (1, 2, 3, 4, 5, 6, 8, 10, 15, 20, 25, 30, 40, 50, 60, 80, 100, 150, 200, 300, 400,
            500, 1000, 2000, 5000)
MAX_LABELS = 4  # labelled rows of the y axis
TICKS_H = (1, 2, 3, 4, 6, 12, 24, 48, 168)  # hours between time ticks
DAY_NAMES = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")  # not the locale's
MONTH_NAMES = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov",
               "Dec")
ASCII_GLYPHS = {"tunnel": "*", "outside": "o", "y_axis": "|", "x_axis": "-", "tick": "+",
                "pointer": "^"}
RICH_GLYPHS = {"tunnel": "\u25cf", "outside": "\u25cb", "y_axis": "\u2502",
               "x_axis": "\u2500", "tick": "\u253c", "pointer": "^"}
STYLES = {"tunnel": "bold cyan", "outside": "yellow", "label": "bright_black",
          "band": "bold magenta", "event": "bold yellow", "down": "green", "up": "yellow",
          "selected": "reverse"}


# --- the model ----------------------------------------------------------------------


@dataclass(frozen=True)
class Column:
    """One column of the view, from `start` to `end`: the points whose
    interval's middle falls in it, and what they say."""

    start: float
    end: float
    points: tuple[Point, ...] = ()
    tunnel_p95: float | None = None  # the worst, ms
    outside_p95: float | None = None
    down_bps: float | None = None  # the mean (WAN's, else the tunnel's)
    up_bps: float | None = None
    cake_down_kbit: float | None = None  # the mean of CAKE's rates
    cake_up_kbit: float | None = None
    seconds: int = 0  # covered by its points
    causes: tuple[tuple[str, int], ...] = ()  # named, with seconds, most first
    cause: str | None = None  # the dominant one but healthy (CAUSE_SHARE), if any


@dataclass(frozen=True)
class Band:
    """A run of columns `first`..`last` whose dominant cause is `cause`;
    `start`/`end` are those of its points that named it."""

    first: int
    last: int
    start: float
    end: float
    cause: str
    text: str  # in words, one line (shown: no control characters)


@dataclass(frozen=True)
class Item:
    """What the selection stops on: a band, or a column's events."""

    kind: str  # "band" or "events"
    first: int
    last: int
    band: Band | None = None
    events: tuple[Event, ...] = ()


@dataclass(frozen=True)
class HistoryView:
    """A day, a week or a month up to `end`: its columns, bands and events,
    and the medians of p95 the bands' words are measured against."""

    name: str  # a key of SPANS
    start: float
    end: float
    columns: tuple[Column, ...]
    bands: tuple[Band, ...]
    events: tuple[tuple[Event, ...], ...]  # by column
    median_tunnel_p95: float | None
    median_outside_p95: float | None
    rates_of: str  # "WAN", "tunnel" or "" (no rates kept)
    points: int  # in the view

    @property
    def column_seconds(self) -> float:
        return (self.end - self.start) / max(1, len(self.columns))

    def column_of(self, t: float) -> int | None:
        """The column of a moment; None outside the view (its end counts as the last's)."""
        if not self.columns or not self.start <= t <= self.end:
            return None
        return min(len(self.columns) - 1, int((t - self.start) / self.column_seconds))


def _finite(value: float | None) -> float | None:
    return value if value is not None and math.isfinite(value) else None


def _mean(values: Iterable[float | None]) -> float | None:
    got = [v for v in map(_finite, values) if v is not None]
    if not got:
        return None
    total = sum(got)
    if math.isfinite(total):
        return total / len(got)
    return _finite(sum(v / len(got) for v in got))  # figures near a float's largest


def _worst(values: Iterable[float | None]) -> float | None:
    got = [v for v in map(_finite, values) if v is not None]
    return max(got) if got else None


def _median(values: Iterable[float | None]) -> float | None:
    got = sorted(v for v in map(_finite, values) if v is not None)
    if not got:
        return None
    mid = len(got) // 2
    return got[mid] if len(got) % 2 else (got[mid - 1] + got[mid]) / 2


def _p95(p: Point, path: str) -> float | None:
    lat = p.latency.get(path)
    return None if lat is None else lat.p95_ms


def _rate(p: Point, way: str) -> float | None:
    cake = p.cake.get(way)
    return None if cake is None else cake.rate_kbit


def _seconds(p: Point) -> int:
    return max(1, p.seconds)


def _column(start: float, end: float, points: list[Point], rates_of: str) -> Column:
    seconds = sum(_seconds(p) for p in points)
    named: dict[str, int] = {}
    for p in points:
        for cause, secs in p.causes.items():
            named[cause] = named.get(cause, 0) + max(0, secs)
    causes = tuple(sorted(named.items(), key=lambda kv: (-kv[1], kv[0])))
    cause = next((c for c, secs in causes if c != HEALTHY and secs > 0), None)
    if cause is not None and named[cause] < min(CAUSE_SHARE * seconds, CAUSE_SECONDS):
        cause = None
    down, up = (("wan_rx_bps", "wan_tx_bps") if rates_of == "WAN"
                else ("tunnel_rx_bps", "tunnel_tx_bps"))
    return Column(
        start, end, tuple(points),
        tunnel_p95=_worst(_p95(p, "tunnel") for p in points),
        outside_p95=_worst(_p95(p, "outside") for p in points),
        down_bps=_mean(getattr(p, down) for p in points),
        up_bps=_mean(getattr(p, up) for p in points),
        cake_down_kbit=_mean(_rate(p, "down") for p in points),
        cake_up_kbit=_mean(_rate(p, "up") for p in points),
        seconds=seconds, causes=causes, cause=cause)


def build_view(points: Sequence[Point], events: Sequence[Event], name: str, end: float,
               width: int) -> HistoryView:
    """The view `name` (a key of SPANS) ending at `end` (Unix seconds), in
    `width` columns of the screen (the labels take LABEL of them): a point
    goes to the column of its interval's middle, an event to that of its time."""
    span = SPANS[name]
    start = end - span
    ncols = max(10, width - LABEL)
    step = span / ncols
    mine = sorted((p for p in points if start < p.t - _seconds(p) / 2 <= end),
                  key=lambda p: p.t)
    rates_of = ("WAN" if any(_finite(p.wan_rx_bps) is not None
                             or _finite(p.wan_tx_bps) is not None for p in mine)
                else "tunnel" if any(_finite(p.tunnel_rx_bps) is not None
                                     or _finite(p.tunnel_tx_bps) is not None for p in mine)
                else "")
    by_column: list[list[Point]] = [[] for _ in range(ncols)]
    for p in mine:
        i = min(ncols - 1, max(0, math.ceil((p.t - _seconds(p) / 2 - start) / step) - 1))
        by_column[i].append(p)
    columns = tuple(_column(start + i * step, start + (i + 1) * step, by_column[i], rates_of)
                    for i in range(ncols))
    view = HistoryView(
        name, start, end, columns, (), tuple(() for _ in range(ncols)),
        median_tunnel_p95=_median(_p95(p, "tunnel") for p in mine),
        median_outside_p95=_median(_p95(p, "outside") for p in mine),
        rates_of=rates_of, points=len(mine))
    by_event: list[list[Event]] = [[] for _ in range(ncols)]
    for e in sorted((e for e in events if _finite(e.t) is not None), key=lambda e: e.t):
        i = view.column_of(e.t)
        if i is not None:
            by_event[i].append(e)
    view = replace(view, events=tuple(tuple(x) for x in by_event))
    return replace(view, bands=tuple(_bands(view)))


def _bands(view: HistoryView) -> list[Band]:
    bands = []
    i = 0
    cols = view.columns
    while i < len(cols):
        cause = cols[i].cause
        if cause is None:
            i += 1
            continue
        j = i
        while j + 1 < len(cols) and cols[j + 1].cause == cause:
            j += 1
        bands.append(_band(view, i, j, cause))
        i = j + 1
    return bands


# --- in words -----------------------------------------------------------------------


def _clock(t: float) -> datetime:
    return datetime.fromtimestamp(t, UTC)


def day_time(t: float) -> str:
    """"Tue 21:05" (UTC)."""
    d = _clock(t)
    return f"{DAY_NAMES[d.weekday()]} {d:%H:%M}"


def time_range(start: float, end: float) -> str:
    """"Tue 21:05-21:40", or "Tue 23:50-Wed 00:40" across midnight (UTC)."""
    a, b = _clock(start), _clock(end)
    if a.date() == b.date():
        return f"{day_time(start)}-{b:%H:%M}"
    return f"{day_time(start)}-{day_time(end)}"


def date_time(t: float) -> str:
    """"Tue 11-24 21:05" (UTC)."""
    d = _clock(t)
    return f"{DAY_NAMES[d.weekday()]} {d:%m-%d %H:%M}"


def cause_words(cause: str) -> str:
    known = CAUSES.get(cause)
    return known[1] if known else shown(cause, 40)


def cause_letter(cause: str) -> str:
    known = CAUSES.get(cause)
    return known[0] if known else UNKNOWN_CAUSE


def event_words(kind: str) -> str:
    known = EVENTS.get(kind)
    return known[1] if known else shown(kind, 40)


def ms(value: float) -> str:
    return f"{value:.1f}" if abs(value) < 10 else f"{value:.0f}"


def mbit(kbit: float) -> str:
    """Mbit/s of a rate in kbit/s: "1.1", "18.0", "940"."""
    return f"{kbit / 1000:.1f}" if kbit < 100_000 else f"{kbit / 1000:.0f}"


def duration(seconds: float) -> str:
    """"35 min", "2.5 h", "3.0 d"."""
    if seconds < 5400:
        return f"{max(1, round(seconds / 60))} min"
    if seconds < 2 * 86_400:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 86_400:.1f} d"


def _band(view: HistoryView, first: int, last: int, cause: str) -> Band:
    cols = view.columns[first:last + 1]
    # the points that named the cause: in the band's columns, and those next
    # to it in the columns either side (there it was named for too little of
    # the column to count, but it began or ended there)
    before = view.columns[first - 1].points if first > 0 else ()
    after = view.columns[last + 1].points if last + 1 < len(view.columns) else ()
    points = [*_run(reversed(before), cause)[::-1], *(p for c in cols for p in c.points),
              *_run(after, cause)]
    naming = [p for p in points if p.causes.get(cause, 0) > 0] or points
    start = min(p.t - _seconds(p) for p in naming)
    end = max(p.t for p in naming)
    named = sum(max(0, p.causes.get(cause, 0)) for p in points)
    head = f"{time_range(start, end)}: {cause_words(cause)}"
    if named < 0.9 * (end - start):  # named on and off: for how long in all
        head += f", {duration(named)} of it"
    parts = [head, *_latency_words(view, cols)]
    t0, t1 = cols[0].start, cols[-1].end
    changes = [e for c in range(first, last + 1) for e in view.events[c]
               if e.kind == "rate_change" and t0 <= e.t <= t1]
    told = {e.data.get("way") for e in changes}  # the ways an event says in its words
    earlier = [p for c in view.columns[:first] for p in c.points if p.t <= start]
    parts += [w for way, w in _cake_words(earlier, points) if way not in told]
    parts += [f"adaptive CAKE: {shown(e.text, 120)}" for e in changes[:2]]
    if len(changes) > 2:
        parts.append(f"{len(changes) - 2} more rate changes")
    worst = max(naming, key=lambda p: (p.causes.get(cause, 0), p.t))
    evidence = worst.evidence or next((p.evidence for p in naming if p.evidence), "")
    if evidence:
        parts.append(f'"{shown(evidence)}"')
    return Band(first, last, start, end, cause, "; ".join(parts))


def _run(points: Iterable[Point], cause: str) -> list[Point]:
    """The points from the first on that name `cause`, up to one that does not."""
    run = []
    for p in points:
        if p.causes.get(cause, 0) <= 0:
            break
        run.append(p)
    return run


def _latency_words(view: HistoryView, cols: Sequence[Column]) -> list[str]:
    """The band's worst p95 through the tunnel against the view's median, and
    outside it (against its own), in one part."""
    tunnel = _worst(c.tunnel_p95 for c in cols)
    outside = _worst(c.outside_p95 for c in cols)

    def against(worst: float, median: float | None, full: bool) -> str:
        if median is None:
            return ""
        delta = worst - median
        if abs(delta) < 0.5:
            return f" (the {view.name}'s median)" if full else " (its median)"
        sign = "+" if delta > 0 else "-"
        return (f" ({sign}{ms(abs(delta))} ms {'over' if delta > 0 else 'under'} the "
                f"{view.name}'s median {ms(median)})" if full else f" ({sign}{ms(abs(delta))})")

    if tunnel is None and outside is None:
        return []
    if tunnel is None:
        assert outside is not None
        return [f"p95 outside the tunnel {ms(outside)} ms"
                + against(outside, view.median_outside_p95, True)]
    words = f"p95 through the tunnel {ms(tunnel)} ms" + against(tunnel, view.median_tunnel_p95,
                                                                True)
    if outside is not None:
        words += f", outside it {ms(outside)} ms" + against(outside, view.median_outside_p95,
                                                            False)
    return [words]


def _cake_words(before: Sequence[Point], points: Sequence[Point]) -> list[tuple[str, str]]:
    """CAKE's rate in a band against the rate before it, by way:
    ("up", "CAKE up 20.0 -> 1.1 Mbit/s")."""
    words = []
    for way in reversed(WAYS):  # down, then up
        rates = [r for r in (_finite(_rate(p, way)) for p in points) if r is not None]
        if not rates:
            continue
        earlier = [r for r in (_finite(_rate(p, way)) for p in before) if r is not None]
        was = earlier[-1] if earlier else rates[0]
        low, high = min(rates), max(rates)
        if low < was:
            words.append((way, f"CAKE {way} {mbit(was)} -> {mbit(low)} Mbit/s"))
        elif high > was:
            words.append((way, f"CAKE {way} {mbit(was)} -> {mbit(high)} Mbit/s"))
    return words


def items(view: HistoryView) -> list[Item]:
    """The bands and the columns with events, along the axis (a band before
    the events of its first column)."""
    found = [Item("band", b.first, b.last, band=b) for b in view.bands]
    found += [Item("events", i, i, events=evs) for i, evs in enumerate(view.events) if evs]
    return sorted(found, key=lambda it: (it.first, it.kind != "band"))


def event_line(e: Event) -> str:
    return f"{day_time(e.t)} {event_words(e.kind)}: {shown(e.text)}"


def summary(view: HistoryView, note: str | None = None) -> str:
    """What the detail lines say while nothing is selected."""
    if note:
        return note
    if not view.points:
        return (f"nothing kept in this {view.name}: the history daemon keeps a point "
                "every 10 s from boot (S42history)")
    n_bands = len(view.bands)
    n_events = sum(len(e) for e in view.events)
    if not n_bands and not n_events:
        return f"no cause named and no event in this {view.name}"
    said = []
    if n_bands:
        said.append(f"{n_bands} band{'s' if n_bands > 1 else ''} of a named cause")
    if n_events:
        said.append(f"{n_events} event{'s' if n_events > 1 else ''}")
    return f"{' and '.join(said)} in this {view.name}: [<] [>] move onto them"


def detail_lines(view: HistoryView, item: Item | None, width: int, rows: int,
                 note: str | None = None) -> list[str]:
    """The selected item in words (or the view's summary), wrapped to
    `width` and cut to `rows` lines (the last ending "..." when cut)."""
    if item is None:
        paragraphs = [summary(view, note)]
    elif item.band is not None:
        paragraphs = [item.band.text]
    else:
        paragraphs = [event_line(e) for e in item.events]
    lines: list[str] = []
    for text in paragraphs:
        lines += textwrap.wrap(text, max(10, width), subsequent_indent="  ") or [""]
    if len(lines) > rows:
        lines = lines[:rows]
        lines[-1] = lines[-1][:max(0, width - 3)] + "..."
    return lines


# --- drawn --------------------------------------------------------------------------


def _step(view: HistoryView, rows: int) -> int:
    worst = _worst(v for c in view.columns for v in (c.tunnel_p95, c.outside_p95)) or 0.0
    return next((s for s in MS_STEPS if s * rows > worst * 1.05), MS_STEPS[-1])


def _row(value: float, step: int, rows: int) -> int:
    """The row (0 = top) of a value: `step` ms a row from 0, the top clips."""
    return rows - 1 - min(rows - 1, max(0, math.floor(value / step)))


def tick_label(view: HistoryView, t: float) -> str:
    d = _clock(t)
    span = view.end - view.start
    if span <= 2 * 86_400:
        return DAY_NAMES[d.weekday()] if (d.hour, d.minute) == (0, 0) else f"{d:%H:%M}"
    if span <= 8 * 86_400:
        return f"{DAY_NAMES[d.weekday()]} {d.day}"
    return f"{MONTH_NAMES[d.month - 1]} {d.day}"


def time_axis(view: HistoryView, glyphs: dict[str, str]) -> str:
    """The axis under the columns: a tick at round UTC times (hours, days;
    weeks from Monday), each labelled right of it, as many as fit."""
    cols = len(view.columns)
    chars = [glyphs["x_axis"]] * cols
    width = len(tick_label(view, view.start)) + 2
    hours = next((h for h in TICKS_H if h * 3600 / view.column_seconds >= width), TICKS_H[-1])
    every = hours * 3600
    offset = 4 * 86_400 if hours == 168 else 0  # the epoch was a Thursday
    t = math.ceil((view.start - offset) / every) * every + offset
    free = 0
    while t <= view.end:
        x = view.column_of(t)
        label = tick_label(view, t)
        if x is not None and x >= free and x + len(label) < cols:
            chars[x] = glyphs["tick"]
            chars[x + 1:x + 1 + len(label)] = label
            free = x + len(label) + 2
        t += every
    return "".join(chars)


def _bar(value: float | None, top: float, bars: str) -> str:
    if value is None:
        return " "
    if top <= 0:
        return bars[0]
    share = value / top
    if not math.isfinite(share):
        return bars[-1]
    return bars[min(len(bars) - 1, max(0, math.floor(share * len(bars))))]


def _legend(pairs: Sequence[tuple[str, str]]) -> str:
    return "  ".join(f"{mark} {words}" for mark, words in pairs)


def chart_lines(view: HistoryView, plot_rows: int, ascii_only: bool = True,
                selected: Item | None = None, loading: bool = False) -> list[Text]:
    """The title, the p95 plot (tunnel and outside), its time axis, the
    rates' bars (down, up), the band and event rows, the selection's pointer
    and the legends: plot_rows + 9 lines, LABEL + len(columns) wide."""
    glyphs = ASCII_GLYPHS if ascii_only else RICH_GLYPHS
    bars = CONSOLE_BARS if ascii_only else MODERN_BARS
    cols = view.columns
    width = LABEL + len(cols)
    title = Text(f"HISTORY  {view.name}  {date_time(view.start)} - {date_time(view.end)} UTC",
                 style="bold")
    if loading:
        title.append("  loading...", style="")
    lines = [title]
    # the plot: the outside drawn first, the tunnel over it
    step = _step(view, plot_rows)
    every = next(n for n in (1, 2, 3, 4, 5, 10) if math.ceil(plot_rows / n) <= MAX_LABELS)
    grid: list[list[tuple[str, str]]] = [[(" ", "")] * len(cols) for _ in range(plot_rows)]
    for x, c in enumerate(cols):
        for series, value in (("outside", c.outside_p95), ("tunnel", c.tunnel_p95)):
            if value is not None:
                grid[_row(value, step, plot_rows)][x] = (glyphs[series], series)
    for y, row in enumerate(grid):
        value = (plot_rows - 1 - y) * step
        label = f"{value:g}" if (plot_rows - 1 - y) % every == 0 else ""
        line = Text(label.rjust(LABEL - 1)[-(LABEL - 1):] + glyphs["y_axis"],
                    style=STYLES["label"])
        for char, key in row:
            line.append(char, style=STYLES.get(key, ""))
        lines.append(line)
    lines.append(Text(" " * (LABEL - 1) + glyphs["tick"] + time_axis(view, glyphs),
                      style=STYLES["label"]))
    # the rates: a full bar is the most either the traffic or CAKE's rate reached
    tops = {}
    for way, get, cake in (("down", lambda c: c.down_bps, lambda c: c.cake_down_kbit),
                           ("up", lambda c: c.up_bps, lambda c: c.cake_up_kbit)):
        top = max([v for c in cols if (v := get(c)) is not None]
                  + [k * 1000 for c in cols if (k := cake(c)) is not None], default=0.0)
        tops[way] = top
        line = Text(f"{way:>{LABEL - 1}}" + glyphs["y_axis"], style=STYLES["label"])
        line.append("".join(_bar(get(c), top, bars) for c in cols), style=STYLES[way])
        lines.append(line)
    # the bands and the events, the selection shown reversed and pointed at
    lo, hi = (selected.first, selected.last) if selected else (-1, -1)
    band_row = Text("cause" + glyphs["y_axis"], style=STYLES["label"])
    event_row = Text("event" + glyphs["y_axis"], style=STYLES["label"])
    for x, c in enumerate(cols):
        picked = lo <= x <= hi
        band_style = STYLES["band"] + (" reverse" if picked and selected
                                       and selected.kind == "band" else "")
        band_row.append(cause_letter(c.cause) if c.cause else " ", style=band_style)
        kinds = {e.kind for e in view.events[x]}
        mark = (" " if not kinds else SEVERAL_EVENTS if len(kinds) > 1
                else EVENTS.get(next(iter(kinds)), (UNKNOWN_EVENT, ""))[0])
        event_style = STYLES["event"] + (" reverse" if picked and selected
                                         and selected.kind == "events" else "")
        event_row.append(mark, style=event_style)
    pointer = "".join(glyphs["pointer"] if lo <= x <= hi else " " for x in range(len(cols)))
    lines += [band_row, event_row, Text(" " * LABEL + pointer, style="bold")]
    # the legends
    medians = "/".join("-" if m is None else ms(m)
                       for m in (view.median_tunnel_p95, view.median_outside_p95))
    first = f"p95 ms: {glyphs['tunnel']} tunnel {glyphs['outside']} outside, median {medians}"
    if view.rates_of:
        first += (f" | {view.rates_of} down/up, top "
                  f"{mbit(tops['down'] / 1000)}/{mbit(tops['up'] / 1000)} Mbit/s")
    # the causes and the kinds of event shown, in the order they first appear
    causes = list(dict.fromkeys(c.cause for c in cols if c.cause))
    kinds = list(dict.fromkeys(e.kind for evs in view.events for e in evs))
    second = _legend([(cause_letter(c), cause_words(c)) for c in causes])
    marks = [(EVENTS.get(k, (UNKNOWN_EVENT, ""))[0], event_words(k)) for k in kinds]
    if any(len({e.kind for e in evs}) > 1 for evs in view.events):
        marks.append((SEVERAL_EVENTS, "several"))
    if marks:
        second += ("  |  " if second else "") + _legend(marks)
    for text in (first, second):
        lines.append(Text(text[:width - 3] + "..." if len(text) > width else text,
                          style=STYLES["label"]))
    return lines
