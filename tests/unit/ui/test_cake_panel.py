"""The CAKE panel's lines with adaptive CAKE: the range, and the rate and the
throughput of the last minutes as two sparklines on one scale; a fixed CAKE
stays as it was."""

from __future__ import annotations

from keel.metrics.collectors import CakeCollector
from keel.metrics.snapshots import CakeAdaptive, CakeDirection, CakeSnapshot, TinStat
from keel.ui import panels
from keel.ui.bars import CONSOLE_BARS, MODERN_BARS
from keel.ui.profile import CONSOLE_BLOCKS

N = CakeCollector.HISTORY
TIN = (TinStat("Best Effort", 5.4, 2.1, 9, 0, 0, 100),)


def direction(adaptive: bool, direction: str = "egress", rates=None, through=None):
    # the line fell from 40 to 20 Mbit/s a minute ago, and CAKE followed
    rates = rates if rates is not None else [40e6] * (N - 60) + [20e6] * 60
    through = through if through is not None else [r * 0.9 for r in rates]
    return CakeDirection(
        direction, "eth0" if direction == "egress" else "ifb4eth0", int(rates[-1]),
        through[-1], 0, 9, 0, TIN,
        CakeAdaptive(10_000_000, 40_000_000, 44_000_000) if adaptive else None,
        tuple(rates), tuple(through))


def test_a_fixed_cake_has_the_lines_it_had():
    snap = CakeSnapshot((direction(False), direction(False, "ingress")))
    lines = [t.plain for t in panels.cake_lines(snap)]
    assert lines == [
        "        dev       rate  thru backlog drops ecn",
        "egress  eth0     20.0M 18.0M      0B     9   0",
        "  peak/avg ms BE 5.4/2.1",
        "ingress ifb4eth0 20.0M 18.0M      0B     9   0",
        "  peak/avg ms BE 5.4/2.1"]
    assert panels.cake_title(snap) == panels.TITLES["cake"]
    assert panels.cake_title(None) == panels.TITLES["cake"]


def test_an_adaptive_direction_shows_its_range_and_two_sparklines():
    snap = CakeSnapshot((direction(True), direction(False, "ingress")))
    lines = [t.plain for t in panels.cake_lines(snap, width=54)]
    assert len(lines) == 6  # one line more, under the adaptive direction only
    assert lines[1].split()[:3] == ["egress", "eth0", "20.0M"]  # the rate now
    line = lines[2]
    assert line.startswith("  adaptive 10.0-44.0M rate ") and len(line) <= 54
    rate, thru = line.split(" rate ")[1].split(" thru ")
    assert len(rate) == len(thru) == 10
    # 18 s a column: the last 60 s (a third) at 20 of 44 Mbit/s, before at 40
    assert rate == CONSOLE_BARS[-1] * 7 + CONSOLE_BARS[1] * 3
    assert set(rate + thru) <= set(CONSOLE_BARS)
    assert lines[3].startswith("  peak/avg ms")
    assert panels.cake_title(snap) == "CAKE  bit/s, adaptive: last 3 min"


def test_one_scale_for_the_rate_and_what_went_through():
    """A line barely used: the rate's bars stand full, the throughput's lie low."""
    rates = [44e6] * N
    d = direction(True, rates=rates, through=[1e6] * N)
    line = panels.adaptive_line(d, 120, MODERN_BARS).plain
    rate, thru = line.split(" rate ")[1].split(" thru ")
    assert set(rate) == {MODERN_BARS[-1]} and set(thru) == {MODERN_BARS[0]}
    assert len(rate) == len(thru) and 2 * len(rate) + len(line.split(" rate ")[0]) + 12 <= 120


def test_a_column_is_the_mean_of_its_seconds_not_the_highest():
    """A cut lasting under a column's seconds still lowers its bar."""
    rates = [44e6] * N
    rates[-10:] = [11e6] * 10  # the last 10 of the last column's 18 s
    line = panels.adaptive_line(direction(True, rates=rates), 54, CONSOLE_BARS).plain
    rate = line.split(" rate ")[1].split(" thru ")[0]
    assert rate[-1] == CONSOLE_BARS[1] and set(rate[:-1]) == {CONSOLE_BARS[-1]}


def test_a_short_history_fills_from_the_right():
    d = direction(True, rates=[40e6] * 20, through=[30e6] * 20)
    rate = panels.adaptive_line(d, 54, CONSOLE_BARS).plain.split(" rate ")[1][:10]
    assert rate == " " * 8 + CONSOLE_BARS[-1] * 2  # 20 s: a column of 18 s, one of 2
    d = direction(True, rates=[40e6] * 3, through=[30e6] * 3)
    rate = panels.adaptive_line(d, 54, CONSOLE_BARS).plain.split(" rate ")[1][:10]
    assert rate == " " * 9 + CONSOLE_BARS[-1]  # the dashboard just opened: 3 s show


def test_a_narrow_panel_drops_the_sparklines_not_the_range():
    line = panels.adaptive_line(direction(True), 30, CONSOLE_BARS).plain
    assert line == "  adaptive 10.0-44.0M"


def test_a_silent_peer_says_the_rate_is_back_at_the_base():
    snap = CakeSnapshot((direction(True),), peer_silent_s=42.0)
    line = panels.cake_lines(snap)[2]
    assert line.plain == "  adaptive 10.0-44.0M peer silent 42s: the base"
    assert line.spans[0].style == panels.WARN
    brief = panels.cake_lines(CakeSnapshot((direction(True),), peer_silent_s=1.0))[2]
    assert " rate " in brief.plain  # a second without answers is no silence


def test_the_range_in_few_columns():
    assert panels._bounds(600_000, 1_500_000) == "600k-1.5M"
    assert panels._bounds(20e6, 44e6) == "20.0-44.0M"
    assert panels._bounds(9e8, 1.2e9) == "900.0M-1.20G"


def test_the_console_draws_only_its_glyphs():
    snap = CakeSnapshot((direction(True), direction(True, "ingress")))
    text = "".join(t.plain for t in panels.cake_lines(snap))
    assert set(text) <= {chr(c) for c in range(32, 127)} | set(CONSOLE_BLOCKS)


def test_spark_columns_mean_partial_and_one_scale():
    from keel.ui.bars import bar_rows, columns

    data = [1.0, 2.0, 3.0, 4.0, 5.0]
    assert columns(data, 3, 2) == [None, 3.0, 5.0]  # the highest, whole columns only
    assert columns(data, 3, 2, agg=lambda v: sum(v) / len(v)) == [None, 2.5, 4.5]
    assert columns(data, 4, 2, partial=True) == [None, 1.0, 3.0, 5.0]
    assert columns(data, 2, 2, partial=True) == [3.0, 5.0]  # as wide as it may be
    assert columns([], 2, 2, partial=True) == [None, None]
    # on one scale: 5 of 10 is half of the levels, not the top
    assert bar_rows(data, 1, 1, 1, "abcd", top=10.0) == ["c"]
    assert bar_rows(data, 1, 1, 1, "abcd") == ["d"]


def test_the_modern_bars_are_textuals_own():
    """keel.ui.bars holds no Textual: its eighth blocks are the ones
    Textual's Sparkline draws, written out."""
    from textual.renderables.sparkline import Sparkline

    assert MODERN_BARS == Sparkline.BARS
