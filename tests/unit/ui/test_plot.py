"""The latency plot's rendering: ASCII on the console, 'x' for losses, grade lines."""

from __future__ import annotations

import itertools
import re

from keel.parse.ping import LatencySample
from keel.thresholds import GRADE_LINES_MS
from keel.ui.widgets.bigtext import big_text
from keel.ui.widgets.plot import ALL, DATA, LABEL_WIDTH, MAX_LABELS, NOTHING, PlotModel

T0 = 1_000_000.0


def filled(ascii_only=True, width=45, height=8):
    model = PlotModel(bucket=1.0, ascii_only=ascii_only, width=width, height=height)
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


def test_the_time_axis_reads_oldest_to_now_left_to_right_and_stays_put():
    model = filled(width=80)  # 71 columns of 1 s
    axis = model.time_axis()
    labels = re.findall(r" (-\d+s|now)\+", axis)
    assert labels == ["-60s", "-50s", "-40s", "-30s", "-20s", "-10s", "now"]
    assert axis.index(" -60s+") < axis.index(" -10s+") < axis.index(" now+")
    assert axis.index("now+") + 3 == model.cols - 1  # the newest column is the last
    model.advance(T0 + 31)
    assert model.time_axis() == axis  # the ticks sit at fixed ages: nothing to repaint


def test_the_plot_scrolls_the_newest_bucket_in_at_the_right():
    model = filled(width=45)  # 36 columns: buckets T0-5 .. T0+30
    before = model.lines()
    model.add("tunnel", [LatencySample(T0 + 31.2, 65.0)])
    model.add("outside", [LatencySample(T0 + 31.2, 3.0)])
    model.advance(T0 + 31)
    after = model.lines()
    cols = slice(LABEL_WIDTH, LABEL_WIDTH + model.cols)
    for old, new in zip(before[:-1], after[:-1], strict=True):
        # the data shift one column left (the dashes of a grade line stay put)
        shifted = [a == b for a, b in zip(old[cols][1:], new[cols][:-1], strict=True)
                   if a not in " -" and b not in " -"]
        assert all(shifted)
    newest = [line[cols][-1] for line in after[:-1]]
    assert newest[model.row(65.0)] == "*" and newest[model.row(3.0)] == "o"


def test_modern_plot_uses_dots_and_keeps_x_for_losses():
    text = "\n".join(filled(ascii_only=False).lines())
    assert not text.isascii()
    assert "\u25cf" in text and "x" in text


def test_a_new_bucket_repaints_the_data_columns_and_a_new_scale_everything():
    model = filled()
    assert model.take_change() == ALL  # first paint: the labels and the axis too
    model.add("tunnel", [LatencySample(T0 + 30.2, 6.0)])
    model.advance(T0 + 31)
    assert model.take_change() == DATA  # the columns scrolled; labels and axis stay
    model.advance(T0 + 31.5)  # same bucket, no sample: nothing to do
    assert model.take_change() == NOTHING
    model.add("tunnel", [LatencySample(T0 + 31.6, 900.0)])
    model.advance(T0 + 32)
    assert model.take_change() == ALL  # a new scale: new labels
    assert model.top >= 900


def test_big_letters():
    console = big_text("A+", console=True)
    assert len(console) == 5
    assert set("".join(console)) <= {"#", " "}
    modern = big_text("A+", console=False)
    assert len(modern) == 3
    assert set("".join(modern)) <= {"\u2588", "\u2580", "\u2584", " "}
    assert big_text("F", True)[0] == "#####"
