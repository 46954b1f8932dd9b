"""The history screen ([y]): what the router kept (keel.history) over a day,
a week or a month: p95 latency through the tunnel and outside it, the rates,
the named causes as bands and the events on one time axis; [<] [>] move onto
a band or an event and say it in words. Drawn by keel.ui.history_view."""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, ClassVar, cast

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen

from keel.history.point import Event, Point
from keel.shown import shown
from keel.ui import history_view as hv
from keel.ui.app_protocol import ConsoleApp
from keel.ui.widgets.footer import Footer
from keel.ui.widgets.lines import LinesPanel

DAY = 86_400
FIXED_ROWS = 16  # the chart's lines but the plot's (9), the fewest detail lines (6), the footer
MIN_PLOT_ROWS = 4
END_ROUND_S = 60  # the view ends at the next whole minute: its columns stay put for a while


class StoreLoader:
    """The default loader (keel.ui.history_view.Loader): the history store on
    /data (keel.history.store), opened at the first load, and read in one
    thread of its own (an SQLite connection stays in the thread that made
    it). No store, or one that will not open, raises NoHistory with what to
    show. A day is read from the 1-min points, a week or a month from the
    10-min ones: a column is 20 minutes or more, and a month's 10-s points
    would be 260,000 rows to read on a small router."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path
        self._store: Any = None
        self._pool: ThreadPoolExecutor | None = None

    def __call__(self, since: float, until: float) -> tuple[Sequence[Point], Sequence[Event]]:
        if self._pool is None:
            self._pool = ThreadPoolExecutor(1, thread_name_prefix="keel-history")
        return self._pool.submit(self._read, since, until).result()

    def _read(self, since: float, until: float) -> tuple[Sequence[Point], Sequence[Event]]:
        try:
            from keel.history.store import DEFAULT_PATH, HistoryStore, StoreError
        except ImportError:  # an image without the history (or its sqlite3)
            raise hv.NoHistory(hv.NO_HISTORY) from None
        path = self.path or DEFAULT_PATH
        try:
            if self._store is None:
                if not path.exists():  # the reader makes no store: the daemon does
                    raise hv.NoHistory(hv.NO_HISTORY)
                self._store = HistoryStore(path)
            seconds = 60 if until - since <= 2 * DAY else 600
            return (self._store.points(since, until, seconds),
                    self._store.events(since, until))
        except StoreError as err:
            self._store = None  # opened again at the next load
            raise hv.NoHistory(f"the history cannot be read: {shown(err, 200)}") from None


class HistoryScreen(Screen[None]):
    """The history of a day, a week or a month (keel.ui.history_view), loaded
    by `load` (since, until) in a worker thread: the UI never waits for it.
    `clock` gives the view's end (now)."""

    KEYS = "[d]ay [w]eek [m]onth  [<][>] bands, events  [enter] words  [r]eload  [esc] back"
    BINDINGS: ClassVar[list[Binding]] = [
        Binding("d", "view('day')", "day"),
        Binding("w", "view('week')", "week"),
        Binding("m", "view('month')", "month"),
        Binding("left,left_square_bracket,shift+tab", "move(-1)", "earlier"),
        Binding("right,right_square_bracket,tab", "move(1)", "later"),
        Binding("enter", "words", "words"),
        Binding("r", "reload", "reload"),
        Binding("escape,q", "back", "back"),
    ]
    DEFAULT_CSS = """
    HistoryScreen #history-detail { height: 1fr; }
    """

    def __init__(self, load: hv.Loader, clock: Callable[[], float] = time.time,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.loader = load
        self.clock = clock
        self.span = "day"  # a key of history_view.SPANS
        self.view: hv.HistoryView | None = None
        self.items: list[hv.Item] = []
        self.index: int | None = None  # the selected item
        self.note: str | None = None  # why there is nothing to show
        self.reading = False  # a load in flight (Widget.loading is Textual's spinner)
        # what the last load read: span, end, points, events (a resize draws it again)
        self._read: tuple[str, float, Sequence[Point], Sequence[Event]] | None = None

    @property
    def keel(self) -> ConsoleApp:
        return cast("ConsoleApp", self.app)

    def compose(self) -> ComposeResult:
        yield LinesPanel(id="history-chart")
        yield LinesPanel(id="history-detail")
        yield Footer(self.KEYS, id="footer")

    def on_mount(self) -> None:
        self.reload()

    def on_resize(self) -> None:
        if self.view is not None and len(self.view.columns) != self.columns():
            self._build(refetch=False)
        else:
            self.redraw()

    # --- geometry ----------------------------------------------------------------

    def columns(self) -> int:
        return max(10, (self.size.width or 80) - hv.LABEL)

    def plot_rows(self) -> int:
        return max(MIN_PLOT_ROWS, (self.size.height or 24) - FIXED_ROWS)

    def detail_rows(self) -> int:
        return max(1, (self.size.height or 24) - self.plot_rows() - 10)

    # --- loading -----------------------------------------------------------------

    def reload(self) -> None:
        self._build(refetch=True)

    def _build(self, refetch: bool) -> None:
        self.reading = True
        end = (math.ceil(self.clock() / END_ROUND_S) * END_ROUND_S if refetch or not self._read
               else self._read[1])
        if self.view is None or self.view.name != self.span:
            self.view = hv.build_view([], [], self.span, end, self.columns() + hv.LABEL)
            self.items, self.index = [], None
        self.redraw()
        self._work(self.span, end, self.columns() + hv.LABEL, refetch or self._read is None)

    @work(thread=True, exclusive=True, group="history", exit_on_error=False)
    def _work(self, span: str, end: float, width: int, refetch: bool) -> None:
        note = None
        points: Sequence[Point] = ()
        events: Sequence[Event] = ()
        if not refetch and self._read is not None and self._read[:2] == (span, end):
            points, events = self._read[2], self._read[3]
        else:
            try:
                points, events = self.loader(end - hv.SPANS[span], end)
            except hv.NoHistory as err:
                note = str(err)
            except Exception as err:  # a loader's fault is shown, never the end of the UI
                note = f"the history cannot be read: {shown(err, 200)}"
        view = hv.build_view(points, events, span, end, width)
        self.app.call_from_thread(self._show, span, end, points, events, view, note)

    def _show(self, span: str, end: float, points: Sequence[Point], events: Sequence[Event],
              view: hv.HistoryView, note: str | None) -> None:
        if not self.is_attached or span != self.span:
            return  # a load for a view since left
        self._read = (span, end, points, events)
        self.view, self.note, self.reading = view, note, False
        self.items = hv.items(view)
        self.index = None
        self.redraw()

    # --- drawing -----------------------------------------------------------------

    @property
    def selected(self) -> hv.Item | None:
        return None if self.index is None else self.items[self.index]

    def redraw(self) -> None:
        if self.view is None:
            return
        chart = hv.chart_lines(self.view, self.plot_rows(), self.keel.profile.console,
                               self.selected, self.reading)
        self.query_one("#history-chart", LinesPanel).set_lines(chart)
        detail = hv.detail_lines(self.view, self.selected, self.size.width or 80,
                                 self.detail_rows(), None if self.reading else self.note)
        if self.reading and self.selected is None:
            detail = [f"reading the history of this {self.span} ..."]
        self.query_one("#history-detail", LinesPanel).set_lines(
            [Text(line, style="bold" if self.selected else "") for line in detail])

    # --- keys --------------------------------------------------------------------

    def action_view(self, span: str) -> None:
        if span != self.span or self.note:
            self.span = span
            self.reload()

    def action_reload(self) -> None:
        self.reload()

    def action_move(self, step: int) -> None:
        if not self.items:
            self.query_one(Footer).say(f"no band and no event in this {self.span}")
            return
        if self.index is None:
            self.index = len(self.items) - 1 if step < 0 else 0
        else:
            self.index = max(0, min(len(self.items) - 1, self.index + step))
        self.redraw()

    def action_words(self) -> None:
        if self.index is None:
            self.action_move(-1)  # the newest
        else:
            self.redraw()

    def action_back(self) -> None:
        self.app.pop_screen()
