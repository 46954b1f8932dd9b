"""The latency plot's rendering: ASCII on the console, 'x' for losses, grade lines."""

from __future__ import annotations

from keel.parse.ping import LatencySample
from keel.ui.bigtext import big_text
from keel.ui.plot import PlotModel

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
    labels = {line[:5].strip(): line for line in lines}
    for bound in ("+5", "+30", "+60"):
        assert bound in labels
        assert "- - -" in labels[bound]  # the dashed grade line
    assert "*" in text and "o" in text


def test_rows_follow_the_grade_bands():
    model = filled()
    rows = {g: r for r, g in model.line_rows().items()}
    # higher RTT = higher on screen (smaller row); each band between lines
    # a line sits on the top row of the band below it
    assert model.row(5.0 + 2) >= rows[5.0] > model.row(5.0 + 10) > rows[30.0]
    assert rows[30.0] > model.row(5.0 + 45) >= rows[60.0] > model.row(5.0 + 90)
    assert model.row(100_000) == 0  # clipped to the top


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
