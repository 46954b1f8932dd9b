"""The history screen's model (keel.ui.history_view), without an app: the
points in columns, the bands of a named cause and their words, the events
on the axis, the drawing in the console's glyphs."""

from __future__ import annotations

import unicodedata

from hypothesis import given, settings
from hypothesis import strategies as st

from keel.history.point import Cake, Event, Latency, Point
from keel.ui import history_view as hv
from keel.ui.profile import CONSOLE_BLOCKS

NOW = 1_795_557_600  # Tue 2026-11-24 22:00 UTC
CONSOLE_FONT = {chr(c) for c in range(32, 127)} | set(CONSOLE_BLOCKS)
BLOAT = "the link is bloated: latency through the tunnel rises with load (+24 ms); " \
        "CAKE holds 120 KiB"
DROPPED = "the line dropped to 1.1 Mbit/s up (base 19.0): CAKE followed"


def at(hour: int, minute: int, days: int = 0) -> int:
    """Unix seconds of hh:mm UTC on the day NOW is in (`days` later or earlier)."""
    return NOW - 22 * 3600 + hour * 3600 + minute * 60 + days * 86_400


def point(t: int, seconds: int = 60, tunnel: float = 14.0, outside: float = 9.0,
          causes: dict[str, int] | None = None, evidence: str = "", down_kbit: int = 18_000,
          up_kbit: int = 19_000, wan: tuple[float, float] = (4e6, 2e6)) -> Point:
    return Point(
        t=t, seconds=seconds,
        latency={"tunnel": Latency(p50_ms=tunnel - 4, p95_ms=tunnel, sent=seconds),
                 "outside": Latency(p50_ms=outside - 2, p95_ms=outside, sent=seconds)},
        wan_rx_bps=wan[0], wan_tx_bps=wan[1],
        cake={"down": Cake(rate_kbit=down_kbit, throughput_bps=wan[0], adaptive=True),
              "up": Cake(rate_kbit=up_kbit, throughput_bps=wan[1], adaptive=True)},
        causes=causes if causes is not None else {"healthy": seconds}, evidence=evidence)


def a_day(end: int = NOW, seconds: int = 60) -> tuple[list[Point], list[Event]]:
    """A day of 1-min points as the store's tier keeps them: p95 14-16 ms
    through the tunnel, 9 ms outside; the line dropped 03:00-03:20 (CAKE up
    19 -> 1.1 Mbit/s); bloat 21:05-21:40 at 38 ms (CAKE down 18 -> 9 Mbit/s
    from 21:15); a config applied at 08:02."""
    points = []
    for t in range(end - 86_400 + seconds, end + 1, seconds):
        bloat = at(21, 5) < t <= at(21, 40)
        dropped = at(3, 0) < t <= at(3, 20)
        points.append(point(
            t, seconds, tunnel=38.0 if bloat else 14.0 + (t // 60) % 3,
            outside=10.0 if bloat else 9.0,
            causes={"bloat": seconds} if bloat else {"line_dropped": seconds, "healthy": 0}
            if dropped else {"healthy": seconds},
            evidence=BLOAT if bloat else DROPPED if dropped else "",
            down_kbit=9_000 if bloat and t > at(21, 15) else 18_000,
            up_kbit=1_100 if dropped else 19_000,
            wan=(15e6, 2e6) if bloat else (4e6, 1e6) if dropped else (4e6, 2e6)))
    events = [
        Event(at(3, 1), "rate_change", "CAKE up: 19000 -> 1100 kbit/s (4 changes): loss 3%",
              {"way": "up", "from_kbit": 19_000, "rate_kbit": 1_100, "changes": 4}),
        Event(at(8, 2), "apply", "revision 12 in force", {"revision": 12, "before": 11}),
        Event(at(21, 15), "rate_change",
              "CAKE down: 18000 -> 9000 kbit/s (3 changes): rtt +22 ms",
              {"way": "down", "from_kbit": 18_000, "rate_kbit": 9_000, "changes": 3}),
    ]
    return points, events


def day_view(width: int = 80) -> hv.HistoryView:
    return hv.build_view(*a_day(), "day", NOW, width)


# --- columns ------------------------------------------------------------------------


def test_the_points_go_to_the_columns_of_their_interval():
    view = day_view()
    assert len(view.columns) == 80 - hv.LABEL
    assert view.start == NOW - 86_400 and view.end == NOW
    assert view.points == 1440
    assert sum(len(c.points) for c in view.columns) == 1440  # each once
    for c in view.columns:
        assert all(c.start < p.t - 30 <= c.end for p in c.points)
    bloat = view.columns[view.column_of(at(21, 30))]
    assert bloat.tunnel_p95 == 38.0 and bloat.outside_p95 == 10.0  # the worst
    quiet = view.columns[view.column_of(at(12, 0))]
    assert quiet.tunnel_p95 == 16.0 and quiet.down_bps == 4e6 and quiet.up_bps == 2e6
    assert quiet.cake_down_kbit == 18_000 and quiet.seconds == sum(p.seconds
                                                                   for p in quiet.points)
    assert quiet.cause is None and quiet.causes == (("healthy", quiet.seconds),)
    assert view.rates_of == "WAN"
    assert view.median_tunnel_p95 == 15.0 and view.median_outside_p95 == 9.0


def test_the_tunnel_rates_stand_in_for_a_wan_that_is_not_measured():
    points = [Point(t=NOW - 600 * i, seconds=600, tunnel_rx_bps=8e6, tunnel_tx_bps=1e6)
              for i in range(10)]
    view = hv.build_view(points, [], "day", NOW, 80)
    assert view.rates_of == "tunnel"
    assert view.columns[-1].down_bps == 8e6
    assert hv.build_view([Point(t=NOW)], [], "day", NOW, 80).rates_of == ""


def test_points_outside_the_view_are_left_out():
    inside, before, after = point(NOW - 3600), point(NOW - 86_400), point(NOW + 60)
    view = hv.build_view([inside, before, after], [], "day", NOW, 80)
    assert view.points == 1
    assert [p for c in view.columns for p in c.points] == [inside]


# --- bands --------------------------------------------------------------------------


def test_bands_are_runs_of_one_named_cause():
    view = day_view()
    assert [(b.cause, b.start, b.end) for b in view.bands] == [
        ("line_dropped", at(3, 0), at(3, 20)), ("bloat", at(21, 5), at(21, 40))]
    for band in view.bands:
        assert all(view.columns[i].cause == band.cause for i in range(band.first, band.last + 1))
        assert view.columns[band.first - 1].cause is None
        assert band.last == len(view.columns) - 1 or view.columns[band.last + 1].cause is None


def test_the_bands_words_say_when_what_how_late_and_what_cake_did():
    line, bloat = day_view().bands
    assert bloat.text == (
        "Tue 21:05-21:40: bufferbloat; p95 through the tunnel 38 ms (+23 ms over the day's "
        "median 15), outside it 10 ms (+1.0); adaptive CAKE: CAKE down: 18000 -> 9000 kbit/s "
        f'(3 changes): rtt +22 ms; "{BLOAT}"')
    assert line.text == (
        "Tue 03:00-03:20: the line dropped; p95 through the tunnel 16 ms (+1.0 ms over the "
        "day's median 15), outside it 9.0 ms (its median); adaptive CAKE: CAKE up: 19000 -> "
        f'1100 kbit/s (4 changes): loss 3%; "{DROPPED}"')


def test_cakes_rates_from_the_points_when_no_event_says_them():
    points, _ = a_day()
    (_, bloat) = hv.build_view(points, [], "day", NOW, 80).bands
    assert "; CAKE down 18.0 -> 9.0 Mbit/s; " in bloat.text
    assert "adaptive CAKE" not in bloat.text


def test_a_cause_counts_for_a_column_from_its_seconds_named():
    """Named for CAUSE_SECONDS (20 s) of a day's 20-minute column: a bad
    minute is a band, not lost in the column's healthy rest."""
    column = hv.build_view([], [], "day", NOW, 80).columns[40]  # 1168 s, from 12:12:36

    def view_of(bloat_s: int) -> hv.HistoryView:
        # the 10-s points whose middles are in the column: 116 of them
        first = (int(column.start) // 10 + 1) * 10
        points = [point(t + 10, 10, causes={"bloat": 10} if t - first < bloat_s
                        else {"healthy": 10})
                  for t in range(first, int(column.end) - 5, 10)]
        assert {hv.build_view(points, [], "day", NOW, 80).column_of(p.t - 5)
                for p in points} == {40}
        return hv.build_view(points, [], "day", NOW, 80)

    assert view_of(10).bands == ()  # 10 s of 1160
    (band,) = view_of(20).bands
    assert band.cause == "bloat" and band.first == band.last == 40
    assert band.end - band.start == 20
    assert band.text.startswith(f"{hv.time_range(band.start, band.end)}: bufferbloat;")


def test_the_worst_cause_of_a_column_wins_and_healthy_is_no_band():
    points = [point(at(12, 0) + 60 * i, causes={"healthy": 20, "far_end": 25, "clock": 15})
              for i in range(1, 19)]
    view = hv.build_view(points, [], "day", NOW, 80)
    assert {b.cause for b in view.bands} == {"far_end"}
    assert "the far end answered late" in view.bands[0].text
    healthy = [point(at(12, 0) + 60 * i) for i in range(1, 19)]
    assert hv.build_view(healthy, [], "day", NOW, 80).bands == ()


def test_a_cause_named_on_and_off_says_how_long_in_all():
    points = [point(at(12, 0) + 60 * i, causes={"bloat": 30, "healthy": 30})
              for i in range(1, 61)]
    (band,) = hv.build_view(points, [], "day", NOW, 80).bands
    assert band.text.startswith("Tue 12:00-13:00: bufferbloat, 30 min of it;")


def test_a_cause_this_version_does_not_know_is_shown_escaped():
    points = [point(at(12, 0) + 60 * i, causes={"new\x1b[2Jcause": 60}, evidence="a\nb")
              for i in range(1, 30)]
    view = hv.build_view(points, [], "day", NOW, 80)
    (band,) = view.bands
    assert "new\\x1b[2Jcause" in band.text and '"a\\x0ab"' in band.text
    chart = "\n".join(t.plain for t in hv.chart_lines(view, 8))
    assert "\x1b" not in chart and "? new\\x1b[2Jcause" in chart


def test_a_band_across_midnight_names_both_days():
    points = [point(at(23, 50) + 60 * i, causes={"starved": 60}) for i in range(1, 51)]
    view = hv.build_view(points, [], "week", NOW + 86_400, 80)
    (band,) = view.bands
    assert band.text.startswith("Tue 23:50-Wed 00:40: the VPS starved the router;")


# --- events and items ---------------------------------------------------------------


def test_events_go_to_the_column_of_their_time():
    view = day_view()
    placed = {e.text: i for i, evs in enumerate(view.events) for e in evs}
    assert len(placed) == 3
    for e in a_day()[1]:
        assert placed[e.text] == view.column_of(e.t)
    outside = hv.build_view([], [Event(NOW - 90_000, "boot", "x"), Event(NOW + 1, "boot", "y"),
                                 Event(NOW, "boot", "z")], "day", NOW, 80)
    assert [e.text for evs in outside.events for e in evs] == ["z"]  # the end is in the view


def test_the_items_are_the_bands_and_the_event_columns_along_the_axis():
    view = day_view()
    found = hv.items(view)
    assert [(i.kind, i.band.cause if i.band else i.events[0].kind) for i in found] == [
        ("band", "line_dropped"), ("events", "rate_change"), ("events", "apply"),
        ("band", "bloat"), ("events", "rate_change")]
    assert [i.first for i in found] == sorted(i.first for i in found)


def test_an_event_in_words_with_its_time():
    view = day_view()
    item = next(i for i in hv.items(view) if i.kind == "events" and i.events[0].kind == "apply")
    assert hv.detail_lines(view, item, 80, 6) == [
        "Tue 08:02 config applied: revision 12 in force"]
    several = hv.build_view([], [Event(at(12, 0), "boot", "boot of keel 1.4"),
                                 Event(at(12, 1), "handshake_lost", "peer a: \x07gone")],
                            "day", NOW, 80)
    (item,) = hv.items(several)
    assert hv.detail_lines(several, item, 80, 6) == [
        "Tue 12:00 boot: boot of keel 1.4", "Tue 12:01 handshake lost: peer a: \\x07gone"]
    row = hv.chart_lines(several, 8)[-4].plain  # the event row: one mark for both
    assert row.strip() == "event|" + " " * item.first + hv.SEVERAL_EVENTS


def test_the_detail_lines_wrap_and_are_cut_to_their_rows():
    view = day_view()
    bloat = hv.items(view)[3]
    lines = hv.detail_lines(view, bloat, 80, 6)
    assert 3 <= len(lines) <= 6 and all(len(line) <= 80 for line in lines)
    assert " ".join(line.strip() for line in lines) == bloat.band.text
    cut = hv.detail_lines(view, bloat, 80, 2)
    assert len(cut) == 2 and cut[-1].endswith("...") and len(cut[-1]) <= 80


# --- the view said and drawn --------------------------------------------------------


def test_the_summary_says_what_there_is_to_move_onto():
    assert hv.summary(day_view()) == \
        "2 bands of a named cause and 3 events in this day: [<] [>] move onto them"
    empty = hv.build_view([], [], "week", NOW, 80)
    assert hv.summary(empty).startswith("nothing kept in this week")
    assert hv.summary(empty, hv.NO_HISTORY) == hv.NO_HISTORY
    quiet = hv.build_view([point(NOW)], [], "day", NOW, 80)
    assert hv.summary(quiet) == "no cause named and no event in this day"


def test_an_empty_history_draws_an_empty_frame():
    view = hv.build_view([], [], "day", NOW, 80)
    assert view.bands == () and hv.items(view) == [] and view.rates_of == ""
    lines = [t.plain for t in hv.chart_lines(view, 8)]
    assert len(lines) == 8 + 9
    assert lines[0] == "HISTORY  day  Mon 11-23 22:00 - Tue 11-24 22:00 UTC"
    assert all(len(line) <= 80 for line in lines)
    assert lines[-2] == "p95 ms: * tunnel o outside, median -/-" and lines[-1] == ""
    assert hv.detail_lines(view, None, 80, 6, hv.NO_HISTORY) == [hv.NO_HISTORY]


def test_the_console_chart_is_80_columns_of_the_vga_font():
    view = day_view()
    lines = hv.chart_lines(view, 8, ascii_only=True, selected=hv.items(view)[3])
    text = [t.plain for t in lines]
    assert all(len(line) == 80 for line in text[1:-2]) and all(len(x) <= 80 for x in text)
    assert set("".join(text)) <= CONSOLE_FONT
    title, plot, axis = text[0], text[1:9], text[9]
    assert title.startswith("HISTORY  day")
    assert [line[:hv.LABEL] for line in plot] == [
        "     |", "   30|", "     |", "   20|", "     |", "   10|", "     |", "    0|"]
    bloat_x = hv.LABEL + view.column_of(at(21, 30))
    assert plot[0][bloat_x] == "*" and plot[5][bloat_x] == "o"  # 38 and 10 ms, 5 ms a row
    assert axis.startswith("     +------+Tue-----+03:00---+06:00")
    down, up, causes, events, pointer = text[10:15]
    assert down.startswith(" down|") and up.startswith("   up|")
    row = [" "] * len(view.columns)
    for b in view.bands:
        row[b.first:b.last + 1] = hv.cause_letter(b.cause) * (b.last - b.first + 1)
    assert causes == "cause|" + "".join(row)
    assert causes[hv.LABEL:].strip().split() == ["LL", "BB"]
    row = [" "] * len(view.columns)
    for e in a_day()[1]:
        row[view.column_of(e.t)] = hv.EVENTS[e.kind][0]
    assert events == "event|" + "".join(row)
    band = view.bands[1]
    assert pointer.rstrip() == " " * (hv.LABEL + band.first) + "^" * (band.last - band.first + 1)
    assert "reverse" in str(lines[12].spans[band.first + 1].style)
    assert text[-2] == ("p95 ms: * tunnel o outside, median 15/9.0 | WAN down/up, top "
                        "18.0/19.0 Mbit/s")
    assert text[-1] == "L the line dropped  B bufferbloat  |  r rate change  a config applied"


def test_the_modern_chart_draws_the_eighth_blocks_and_round_points():
    text = "\n".join(t.plain for t in hv.chart_lines(day_view(), 8, ascii_only=False))
    assert "\u25cf" in text and "\u25cb" in text and "\u2502" in text


def test_the_time_axis_of_a_week_and_of_a_month():
    week = hv.build_view([], [], "week", NOW, 80)
    axis = hv.time_axis(week, hv.ASCII_GLYPHS)
    assert len(axis) == 74
    assert axis.split("+")[1:] == ["Wed 18----", "Thu 19----", "Fri 20---", "Sat 21----",
                                   "Sun 22---", "Mon 23----", "Tue 24---"]
    month = hv.build_view([], [], "month", NOW, 80)
    labels = [part.strip("-") for part in hv.time_axis(month, hv.ASCII_GLYPHS).split("+")[1:]]
    assert labels == ["Oct 26", "Nov 2", "Nov 9", "Nov 16"]  # Mondays
    assert hv.tick_label(month, at(0, 0)) == "Nov 24"


def test_a_month_of_ten_minute_points():
    """What the store gives a month's view: 4320 points of 10 min; a
    two-day outage of the far end shows as one band."""
    points = []
    for t in range(NOW - 30 * 86_400 + 600, NOW + 1, 600):
        late = at(6, 0, -12) < t <= at(6, 0, -10)
        points.append(point(t, 600, tunnel=60.0 if late else 15.0, outside=30.0 if late else 9.0,
                            causes={"far_end": 480, "healthy": 120} if late else {"healthy": 600},
                            evidence="the far end answers late: +45 ms" if late else ""))
    view = hv.build_view(points, [Event(at(6, 1, -12), "handshake_lost", "peer b")],
                         "month", NOW, 80)
    assert view.points == 4320 and len(view.columns) == 74
    (band,) = view.bands
    assert band.start == at(6, 0, -12) and band.end == at(6, 0, -10)
    assert band.text.startswith(
        "Thu 06:00-Sat 06:00: the far end answered late, 38.4 h of it; p95 through the tunnel "
        "60 ms (+45 ms over the month's median 15)")
    # the band from the column where it began (20 s of it are enough), the
    # event in that column
    assert [(i.kind, i.first) for i in hv.items(view)] == [("band", 42), ("events", 42)]
    assert all(len(t.plain) <= 80 for t in hv.chart_lines(view, 8))


# --- whatever the store holds -------------------------------------------------------

UNSAFE = {"Cc", "Cf", "Zl", "Zp", "Cs", "Co", "Cn"}


def safe(text: str) -> bool:
    return all(ch == " " or (ch.isprintable() and unicodedata.category(ch) not in UNSAFE)
               for ch in text)


figures = st.one_of(st.none(), st.floats(allow_nan=True, allow_infinity=True),
                    st.integers(-10**6, 10**6).map(float))
latencies = st.builds(Latency, p50_ms=figures, p95_ms=figures, max_ms=figures, loss=figures,
                      sent=st.integers(0, 10**6))
cakes = st.builds(Cake, rate_kbit=st.one_of(st.none(), st.integers(-10**9, 10**9)),
                  throughput_bps=figures, adaptive=st.booleans())
points = st.builds(
    Point, t=st.integers(NOW - 2 * 86_400, NOW + 86_400), seconds=st.integers(-10, 100_000),
    latency=st.dictionaries(st.sampled_from(["tunnel", "outside"]), latencies),
    wan_rx_bps=figures, wan_tx_bps=figures, tunnel_rx_bps=figures, tunnel_tx_bps=figures,
    cake=st.dictionaries(st.sampled_from(["up", "down"]), cakes),
    causes=st.dictionaries(st.one_of(st.sampled_from([*hv.CAUSES, "healthy"]), st.text()),
                           st.integers(-10**6, 10**9), max_size=4),
    evidence=st.text())
events = st.builds(Event, t=st.floats(NOW - 2 * 86_400, NOW + 86_400),
                   kind=st.one_of(st.sampled_from([*hv.EVENTS]), st.text()), text=st.text(),
                   data=st.dictionaries(st.sampled_from(["way", "x"]), st.text(), max_size=2))


@settings(max_examples=150, deadline=None)
@given(st.lists(points, max_size=40), st.lists(events, max_size=8),
       st.sampled_from(list(hv.SPANS)), st.integers(20, 200), st.integers(4, 20))
def test_whatever_the_points_say_the_view_stands_and_shows_no_control_character(
        pts, evs, span, width, rows):
    view = hv.build_view(pts, evs, span, NOW, width)
    assert len(view.columns) == max(10, width - hv.LABEL)
    for band in view.bands:
        assert safe(band.text)
        assert view.start <= band.start + 100_000 and band.first <= band.last
    chosen = hv.items(view)
    for item in [None, *chosen]:
        assert all(safe(line) for line in hv.detail_lines(view, item, width, 6))
        chart = hv.chart_lines(view, rows, ascii_only=True, selected=item)
        assert len(chart) == rows + 9
        assert all(safe(t.plain) for t in chart)
