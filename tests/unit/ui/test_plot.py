"""The latency plot's rendering: ASCII on the console, 'x' for losses, grade lines."""

from __future__ import annotations

import itertools

from keel.parse.ping import LatencySample
from keel.thresholds import GRADE_LINES_MS
from keel.ui.bigtext import big_text
from keel.ui.plot import LABEL_WIDTH, MAX_LABELS, PlotModel

T0 = 1_000_000.0


def filled(sweep=False, ascii_only=True, width=45, height=8):
    model = PlotModel(bucket=1.0, sweep=sweep, ascii_only=ascii_only, width=width,
                      height=height)
    model.set_baseline(5.0)
    for i in range(30):
        rtt = None if i % 10 == 9 else 5 + i * 2.5
        model.add("tunnel", [LatencySample(T0 + i + 0.1, rtt)])
        model.add("outside", [LatencySample(T0 + i + 0.1, 3.0)])
    model.advance(T0 + 30)
    return model


def test_console_plot_is_ascii_with_losses_and_grade_lines():
    lines = filled().lines()
    text = "\n".join(lines)
    assert text.isascii()
    assert text.count("x") == 3  # the three lost probes, on the top row
    assert lines[0].count("x") == 3
    named = {line.rstrip().rsplit(" ", 1)[-1]: line for line in lines[:-1]
             if line.rstrip().endswith(tuple(f"+{g:g}" for g in GRADE_LINES_MS))}
    assert set(named) == {f"+{g:g}" for g in GRADE_LINES_MS}
    for line in named.values():
        assert "- - -" in line  # the dashed grade line
    assert "*" in text and "o" in text


def test_the_ms_axis_is_linear_with_labelled_ticks():
    model = filled()  # 7 data rows, baseline 5 ms, worst 77.5 ms
    assert model.rows == 7 and model.step == 20 and model.top == 140
    for y in range(model.rows):
        assert model.value(y) == (model.rows - 1 - y) * model.step
    # a value is drawn on the row whose label is at or below it
    assert model.row(0) == model.row(19.9) == 6
    assert model.row(20) == model.row(39.9) == 5
    assert model.row(120) == 0 and model.row(100_000) == 0  # clipped to the top
    labels = {y: model.label(y)[:LABEL_WIDTH - 1].strip() for y in range(model.rows)}
    ticks = {y: float(t) for y, t in labels.items() if t}
    # 7 rows: at most MAX_LABELS labels, so every other row, from 0 up
    assert ticks == {6: 0.0, 4: 40.0, 2: 80.0, 0: 120.0}
    # grade lines on the rows of idle + each bound (from keel.thresholds)
    for g in GRADE_LINES_MS:
        assert model.line_rows()[model.row(5.0 + g)] >= g


def test_labels_thin_out_but_stay_linear_on_a_tall_plot():
    model = filled(height=31)  # 30 data rows
    ticks = model.ticks()
    assert 3 <= len(ticks) <= MAX_LABELS
    values = [ticks[y] for y in sorted(ticks, reverse=True)]
    rows = sorted(ticks, reverse=True)
    assert values[0] == 0
    assert len({b - a for a, b in itertools.pairwise(values)}) == 1
    assert len({a - b for a, b in itertools.pairwise(rows)}) == 1


def test_the_scale_follows_the_worst_rtt_and_the_grade_lines():
    model = PlotModel(bucket=1.0, width=45, height=6)
    model.set_baseline(200.0)  # a far peer: the +60 line still fits
    assert model.top > 260
    model.add("tunnel", [LatencySample(T0, 900.0)])
    model.advance(T0 + 1)
    assert model.top > 900 and model.row(900.0) == 0 < model.row(899.0 - model.step)


def test_the_time_axis_counts_seconds_ago():
    model = filled(width=45)  # 36 columns of 1 s
    axis = model.lines()[-1][LABEL_WIDTH:]
    assert axis.rstrip().endswith(" now+")  # scrolling: the newest column is the last
    assert " -10s+" in axis and " -20s+" in axis
    # each tick sits `age` columns left of now
    now = axis.index("now+") + 3
    assert axis[now - 10] == "+" and axis[now - 20] == "+"


def test_the_sweeps_time_axis_travels_with_the_newest_column():
    model = filled(sweep=True, width=45)
    axis = model.time_axis()
    assert axis.index("now+") + 3 == model.cur % model.cols
    model.advance(T0 + 31)
    moved = model.time_axis()
    assert moved.index("now+") + 3 == model.cur % model.cols
    assert moved != axis


def test_modern_plot_uses_dots_and_keeps_x_for_losses():
    text = "\n".join(filled(ascii_only=False).lines())
    assert not text.isascii()
    assert "\u25cf" in text and "x" in text


def test_sweep_repaints_only_the_new_columns():
    model = filled(sweep=True)
    assert model.take_dirty() is None  # first paint: all
    model.add("tunnel", [LatencySample(T0 + 30.2, 6.0)])
    model.advance(T0 + 31)
    dirty = model.take_dirty()
    assert dirty is not None and len(dirty) <= 3
    model.advance(T0 + 31.5)  # same bucket: nothing to do
    assert model.take_dirty() == set()


def test_scroll_mode_repaints_everything_and_rescales():
    model = filled()
    model.take_dirty()
    model.add("tunnel", [LatencySample(T0 + 31.1, 900.0)])
    model.advance(T0 + 32)
    assert model.take_dirty() is None
    assert model.top >= 900


def test_big_letters():
    console = big_text("A+", console=True)
    assert len(console) == 5
    assert set("".join(console)) <= {"#", " "}
    modern = big_text("A+", console=False)
    assert len(modern) == 3
    assert set("".join(modern)) <= {"\u2588", "\u2580", "\u2584", " "}
    assert big_text("F", True)[0] == "#####"
