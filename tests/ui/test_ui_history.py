"""Pilot tests of the history screen ([y]) at 80x24 on the console profile:
opened from the dashboard, a day of kept points with two bands and three
events (tests/unit/ui/test_history_view.py's), moved along with the keys,
the views switched, and what it says with no history or a loader that fails
or is slow. And the default loader on a real store."""

from __future__ import annotations

import threading
from dataclasses import replace

from keel.history.point import Event, Point
from keel.ui import history_view as hv
from keel.ui.profile import CONSOLE_BLOCKS, MODERN
from keel.ui.screens.dashboard import DashboardScreen
from keel.ui.screens.history import HistoryScreen, StoreLoader
from keel.ui.widgets.lines import LinesPanel
from tests.ui.uihelpers import asynctest, make_app, screen_lines, settle
from tests.unit.ui.test_history_view import BLOAT, NOW, a_day, at

CONSOLE_FONT = {chr(c) for c in range(32, 127)} | set(CONSOLE_BLOCKS)


class DayLoader:
    """The fixture's day, moved to end where the view ends (the view is
    drawn against the clock: its columns fall as on NOW's day, its words
    name the times moved). Records what it was asked."""

    def __init__(self) -> None:
        self.asked: list[tuple[float, float]] = []
        self.points, self.events = a_day()

    def __call__(self, since: float, until: float) -> tuple[list[Point], list[Event]]:
        self.asked.append((since, until))
        shift = int(until) - NOW
        return ([replace(p, t=p.t + shift) for p in self.points if since <= p.t + shift <= until],
                [replace(e, t=e.t + shift) for e in self.events if since <= e.t + shift <= until])


def detail(app) -> str:
    return app.screen.query_one("#history-detail", LinesPanel).text


def chart(app) -> list[str]:
    return app.screen.query_one("#history-chart", LinesPanel).plain_lines


@asynctest
async def test_y_opens_the_history_of_the_day_and_escape_goes_back():
    loader = DayLoader()
    app = make_app(history=loader)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        assert "histor[y]" in screen_lines(app)[-1]  # the dashboard's keys say it
        await pilot.press("y")
        await settle(pilot)
        assert isinstance(app.screen, HistoryScreen)
        (since, until), = loader.asked
        assert until - since == 86_400 and until % 60 == 0
        lines = screen_lines(app)
        assert len(lines) == 24 and all(len(line) <= 80 for line in lines)
        assert set("".join(lines)) <= CONSOLE_FONT  # the VGA font's glyphs
        assert lines[0].startswith("HISTORY  day  ")
        assert lines[-1].startswith("[d]ay [w]eek [m]onth")
        plot = lines[1:9]  # 5 ms a row: 15 ms through the tunnel, 9 outside
        assert [line[:hv.LABEL] for line in plot][-3:] == ["   10|", "     |", "    0|"]
        assert plot[-4].count("*") > 60 and plot[-3].count("o") == 2  # most and in the bloat
        assert plot[-2].count("o") > 60
        causes = next(line for line in lines if line.startswith("cause|"))
        assert causes[hv.LABEL:].split() == ["LL", "BB"]  # the two bands
        assert "2 bands of a named cause and 3 events in this day" in detail(app)
        await pilot.press("escape")
        await settle(pilot)
        assert isinstance(app.screen, DashboardScreen)
        await pilot.press("y")
        await settle(pilot)
        await pilot.press("q")  # back, too: not the app's quit
        await settle(pilot)
        assert isinstance(app.screen, DashboardScreen) and app.is_running


@asynctest
async def test_the_arrows_move_onto_a_band_and_its_words_show():
    app = make_app(history=DayLoader())
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("y")
        await settle(pilot)
        view = app.screen.view
        bloat = view.bands[1]
        await pilot.press("left")  # the newest: the rate change at 21:15
        assert detail(app).endswith("rate change: CAKE down: 18000 -> 9000 kbit/s (3 changes): "
                                    "rtt +22 ms")
        await pilot.press("left")  # the bloat before it
        words = " ".join(line.strip() for line in detail(app).splitlines())
        assert words == bloat.text
        assert words.startswith(f"{hv.time_range(bloat.start, bloat.end)}: bufferbloat; "
                                "p95 through the tunnel 38 ms (+23 ms over the day's median 15)")
        assert BLOAT in words
        pointer = chart(app)[14]
        assert pointer.rstrip() == " " * (hv.LABEL + bloat.first) + "^" * 2
        await pilot.press("right")
        assert "rate change" in detail(app)
        for _ in range(9):  # to the oldest: the line dropped; no further
            await pilot.press("left")
        assert "the line dropped; p95 through the tunnel 16 ms" in detail(app)
        await pilot.press("tab")
        assert "rate change: CAKE up" in detail(app)


@asynctest
async def test_enter_shows_the_newest_and_d_w_m_switch_the_views():
    loader = DayLoader()
    app = make_app(history=loader)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("y")
        await settle(pilot)
        await pilot.press("enter")
        assert "rate change: CAKE down" in detail(app)
        await pilot.press("w")
        await settle(pilot)
        assert chart(app)[0].startswith("HISTORY  week  ")
        assert loader.asked[-1][1] - loader.asked[-1][0] == 7 * 86_400
        assert "3 events in this week" in detail(app)  # the bands too short for its columns
        await pilot.press("m")
        await settle(pilot)
        assert chart(app)[0].startswith("HISTORY  month  ")
        assert loader.asked[-1][1] - loader.asked[-1][0] == 30 * 86_400
        await pilot.press("d")
        await settle(pilot)
        assert chart(app)[0].startswith("HISTORY  day  ")
        asked = len(loader.asked)
        await pilot.press("r")
        await settle(pilot)
        assert len(loader.asked) == asked + 1
        assert isinstance(app.screen, HistoryScreen)  # w: the week, not the wizard


@asynctest
async def test_no_history_yet_says_where_it_comes_from():
    def none(since: float, until: float) -> tuple[list[Point], list[Event]]:
        raise hv.NoHistory(hv.NO_HISTORY)

    app = make_app(history=none)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("y")
        await settle(pilot)
        assert detail(app) == hv.NO_HISTORY
        assert chart(app)[0].startswith("HISTORY  day")
        await pilot.press("left")
        assert "no band and no event in this day" in screen_lines(app)[-1]


@asynctest
async def test_a_loader_that_fails_is_said_escaped():
    def broken(since: float, until: float) -> tuple[list[Point], list[Event]]:
        raise RuntimeError("disk \x1b[2J gone")

    app = make_app(history=broken)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("y")
        await settle(pilot)
        assert detail(app) == "the history cannot be read: disk \\x1b[2J gone"


@asynctest
async def test_the_ui_does_not_wait_for_a_slow_loader():
    go = threading.Event()
    day = DayLoader()

    def slow(since: float, until: float) -> tuple[list[Point], list[Event]]:
        go.wait(10)
        return day(since, until)

    app = make_app(history=slow)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("y")
        await pilot.pause()
        assert "loading..." in chart(app)[0]
        assert detail(app) == "reading the history of this day ..."
        await pilot.press("escape")  # the keys work meanwhile
        await pilot.pause()
        assert isinstance(app.screen, DashboardScreen)
        go.set()
        await settle(pilot)


@asynctest
async def test_the_fixed_clock_screen_at_80x24():
    """The screen as the console draws it, on the fixture's own day."""
    app = make_app(history=DayLoader())
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        app.push_screen(HistoryScreen(DayLoader(), clock=lambda: NOW))
        await settle(pilot)
        await pilot.press("left", "left")
        lines = screen_lines(app)
        assert lines[0] == "HISTORY  day  Mon 11-23 22:00 - Tue 11-24 22:00 UTC"
        assert lines[9] == "     +------+Tue-----+03:00---+06:00---+09:00----+12:00---+15:00" \
                           "---+18:00-------"
        assert lines[17] == "Tue 21:05-21:40: bufferbloat; p95 through the tunnel 38 ms " \
                            "(+23 ms over the"
        assert lines[-1].startswith("[d]ay")


@asynctest
async def test_the_modern_profile_fits_120x40():
    app = make_app(MODERN, history=DayLoader())
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("y")
        await settle(pilot)
        lines = screen_lines(app)
        assert len(chart(app)) == 40 - 16 + 9  # the plot takes the height
        assert len(app.screen.view.columns) == 120 - hv.LABEL
        assert "\u25cf" in "".join(lines)
        await pilot.press("left", "left")
        assert detail(app).startswith(hv.time_range(app.screen.view.bands[1].start,
                                                    app.screen.view.bands[1].end))


def test_the_default_loader_reads_the_store_and_makes_none(tmp_path):
    from keel.history.store import HistoryStore

    missing = tmp_path / "keel" / "history.db"
    try:
        StoreLoader(missing)(NOW - 86_400, NOW)
    except hv.NoHistory as err:
        assert str(err) == hv.NO_HISTORY
    else:
        raise AssertionError("no NoHistory")
    assert not missing.parent.exists()  # a reader makes no store

    points = [Point(t=at(21, 0) + 10 * i, causes={"bloat": 10}, evidence=BLOAT)
              for i in range(1, 13)]
    with HistoryStore(missing, clock=lambda: NOW) as store:
        store.write_batch(points, [Event(at(21, 1), "apply", "revision 3 in force")])
    loader = StoreLoader(missing)
    got, events = loader(NOW - 86_400, NOW)
    assert [p.t for p in got] == [at(21, 1), at(21, 2)]  # the day: 1-min points
    assert got[0].causes == {"bloat": 60}
    assert [e.text for e in events] == ["revision 3 in force"]
    week, _ = loader(NOW - 7 * 86_400, NOW)
    assert [(p.t, p.seconds) for p in week] == [(at(21, 10), 600)]  # 10-min points
