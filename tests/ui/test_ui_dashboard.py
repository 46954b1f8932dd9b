"""Pilot tests of the dashboard at 80x24 on the lab fixtures: what each panel shows."""

from __future__ import annotations

import asyncio
import itertools
import json
import re

import pytest
from textual.widgets import Sparkline

from keel.system.fake import FakeLiveSource
from keel.system.source import FixtureSource
from keel.thresholds import GRADE_LINES_MS
from keel.ui import panels
from keel.ui.profile import CONSOLE, CONSOLE_BLOCKS, MODERN
from keel.ui.widgets.frame import Frame
from keel.ui.widgets.lines import LinesPanel
from keel.ui.widgets.plot import LABEL_WIDTH, LatencyPlot
from keel.ui.widgets.sparkline import RateSparkline
from tests.fixtures.sources import fixture_source, lab
from tests.ui.uihelpers import (
    StepClock,
    asynctest,
    fixture_collectors,
    make_app,
    screen_lines,
    settle,
    tunnel_only_collectors,
    two_polls,
)

CONSOLE_FONT = {chr(c) for c in range(32, 127)} | set(CONSOLE_BLOCKS)


def spark(app, name: str) -> RateSparkline:
    return app.screen.query_one(f"#{name}-spark", RateSparkline)


def framed(app, name: str):
    """The widget carrying a panel's title: its Frame, or the panel itself."""
    frames = app.screen.query(f"#{name}-box")
    return frames.first() if frames else app.screen.query_one(f"#{name}")


def panel(app, name: str) -> str:
    return app.screen.query_one(f"#{name}", LinesPanel).text


@asynctest
async def test_everything_fits_at_80x24():
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await two_polls(pilot)
        lines = screen_lines(app)
        text = "\n".join(lines)
        assert len(lines) == 24 and all(len(line) <= 80 for line in lines)
        for title in ("NOW", "TUNNEL", "CPU", "LATENCY", "CAKE", "TUNING"):
            assert f"- {title} " in text
        assert lines[-1].startswith("[s]elftest")
        # the console profile draws ASCII and the VGA font's two blocks, no more
        assert set("".join(lines)) <= CONSOLE_FONT


@asynctest
async def test_tunnel_panel_shows_peer_endpoint_handshake_and_rates():
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        assert spark(app, "rx").label == "rx      - "  # one read: no rate yet
        await pilot.press("r")
        await settle(pilot)
        text = panel(app, "tunnel")
        # peer: 1.25 MB rx, 0.5 MB tx in the 1 s between the polls; handshake 12 s ago
        assert text.splitlines()[1] == "DGDJOoNe 192.0.2.2:51820 hs 12s 10.0M/4.0M"
        # interface: 30 MB rx / 10 MB tx, 25000 / 9000 packets in 1 s
        assert text.splitlines()[0] == "wg0 :51820  25k/9.0k pkt/s rx/tx"
        assert spark(app, "rx").label == "rx 240.0M "
        assert spark(app, "tx").label == "tx  80.0M "
        assert "REDACTED" not in text


@asynctest
async def test_cpu_panel_shows_cores_and_tunnel_cost():
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await two_polls(pilot)
        lines = panel(app, "cpu").splitlines()
        assert lines[0] == "      user  sys sirq steal idle"
        assert lines[1] == "cpu0    2%  38%  19%    0%  41%"
        assert lines[2] == "cpu1    1%  38%  34%    0%  27%"
        # softirq 2.59 s + wg-crypt 1.00 s over 4.88 s; 40 MB = 0.32 Gbit
        assert lines[3] == "tunnel 0.74 core = 37% of 2 CPUs"
        assert lines[4] == " 11.2 CPU-s/Gbit at 65.6Mbit/s"
        assert len(lines) == 5  # no warning: the verdict line says the rest


def hot_stats(n: int) -> list[str]:
    """/proc/stat reads where cpu0 spends 95% in softirq and cpu1 idles."""
    reads = []
    for i in range(n):
        s0 = (5 + 95 * i, 100 + 5 * i)  # softirq, idle of cpu0
        s1 = (5, 100 + 100 * i)
        total = (s0[0] + s1[0], s0[1] + s1[1])
        reads.append(f"cpu  0 0 0 {total[1]} 0 0 {total[0]} 0 0 0\n"
                     f"cpu0 0 0 0 {s0[1]} 0 0 {s0[0]} 0 0 0\n"
                     f"cpu1 0 0 0 {s1[1]} 0 0 {s1[0]} 0 0 0\n")
    return reads


@asynctest
async def test_cpu_warning_when_one_core_carries_the_tunnel():
    source = fixture_source(stats=hot_stats(5))
    app = make_app(collectors=fixture_collectors(source))
    async with app.run_test(size=(80, 24)) as pilot:
        await two_polls(pilot)
        assert "!" not in panel(app, "cpu")  # seen once: not yet a warning
        for _ in range(2):
            await pilot.press("r")
            await settle(pilot)
        text = panel(app, "cpu")
        assert "! cpu0 softirq 95% while the other cores idle" in text
        assert "! cpu0 softirq" in "\n".join(screen_lines(app))


@asynctest
async def test_latency_panel_and_plot():
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await two_polls(pilot)
        head = panel(app, "latency").splitlines()
        assert head[0].startswith("* tunnel  10.99.0.2")
        assert head[1].startswith("o outside 192.0.2.2")
        assert "gap" in head[0] and "tunnel's own cost" in head[1]
        assert "idle 3.1" in head[1]
        plot = "\n".join(app.screen.query_one("#plot").model.lines())
        assert "*" in plot and "o" in plot and "x" in plot  # a lost probe (every 7th)
        for bound in GRADE_LINES_MS:  # each grade line named at its right end
            assert f"- +{bound:g}" in plot


@asynctest
async def test_cake_panel_both_directions():
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await two_polls(pilot)
        lines = panel(app, "cake").splitlines()
        assert lines[1].split() == ["egress", "eth0", "40.0M", "20.0M", "0B", "9", "0"]
        assert lines[2].strip() == "peak/avg ms BE 6.7/1.6"
        assert lines[3].split() == ["ingress", "ifb4eth0", "40.0M", "40.0M", "0B", "3", "0"]
        # the tins that delayed something; Bulk carried nothing
        assert "BE 10.5/4.4" in lines[4] and "Voice" in lines[4] and "Bulk" not in lines[4]


@asynctest
async def test_tuning_panel_in_a_vm():
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        assert panel(app, "tuning").splitlines() == [
            "managed by the hypervisor", "(no cpufreq/cpuidle)", "2300 MHz: watch steal"]


@asynctest
async def test_tuning_panel_on_bare_metal():
    from keel.metrics.collectors import TuningCollector

    collectors = fixture_collectors()
    collectors["tuning"] = TuningCollector(FakeLiveSource(cpufreq=True), pm_qos=lambda: 0)
    app = make_app(collectors=collectors)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        assert panel(app, "tuning").splitlines() == [
            "governor performance", "2394/2400 MHz", "idle POLL (C1 C6 off)", "PM QoS 0us"]


@asynctest
async def test_errors_are_shown_not_raised():
    empty = FixtureSource({"/proc/stat": lab("proc-stat-before.txt")})
    app = make_app(collectors=fixture_collectors(empty))
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        assert "wg: wg: no fixture" in panel(app, "tunnel")
        assert "tc: tc: no fixture" in panel(app, "cake")


@asynctest
async def test_hidden_dashboard_polls_nothing():
    source = fixture_source()
    fast = dict.fromkeys(("tunnel", "cpu", "cake", "tuning", "latency"), 0.05)
    app = make_app(collectors=fixture_collectors(source), intervals=fast)
    async with app.run_test(size=(80, 24)) as pilot:
        # (waited for, not slept: a busy host may take longer than 3 x 0.05 s)
        assert await eventually(lambda: source.reads.count("/proc/stat") >= 3)  # polling
        await pilot.press("s")
        await settle(pilot)
        hidden = len(source.reads)
        await asyncio.sleep(0.4)
        assert len(source.reads) == hidden  # the self-test screen polls latency only
        await pilot.press("escape")
        assert await eventually(lambda: len(source.reads) > hidden)


async def eventually(condition, within: float = 10.0) -> bool:
    """Whether `condition()` holds within `within` seconds (checked every 20 ms)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + within
    while not condition():
        if loop.time() > deadline:
            return False
        await asyncio.sleep(0.02)
    return True


@asynctest
async def test_modern_profile_at_120x40():
    app = make_app(MODERN)
    async with app.run_test(size=(120, 40)) as pilot:
        await two_polls(pilot)
        assert app.theme == "textual-dark"
        text = "\n".join(screen_lines(app))
        assert "\u25cf tunnel" in text  # the modern plot's glyphs
        assert app.screen.query_one("#plot").size.height > 15


@asynctest
async def test_the_verdict_line_and_the_verdicts_screen(tmp_path, monkeypatch):
    from keel.ui import signals

    monkeypatch.setattr(signals, "EXPORT_DIRS", (tmp_path / "ro" / "x", tmp_path / "export"))
    (tmp_path / "ro").write_text("a file: the first place is not writable")
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await two_polls(pilot)
        lines = screen_lines(app)
        assert lines[0].startswith("- NOW  what limits latency ---")  # the verdict on top
        assert lines[1].startswith("healthy: stall max 1 ms, steal 0%")
        await pilot.press("v")
        await settle(pilot)
        for _ in range(3):
            await pilot.press("r")
            await settle(pilot)
        lines = screen_lines(app)
        assert lines[0].startswith("VERDICTS") and lines[1].strip() == "healthy"
        assert "CPU stalls (worst wakeup, ms)" in lines
        assert "tunnel latency over idle (ms)" in lines
        await pilot.press("e")
        await pilot.pause()
        (exported,) = (tmp_path / "export").iterdir()
        assert "s exported to" in screen_lines(app)[-1]
        rows = [json.loads(line) for line in exported.read_text().splitlines()]
        assert len(rows) >= 4 and rows[-1]["stall_max_ms"] == 1.2
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen.id == "dashboard"


@asynctest
async def test_the_now_line_names_a_rise_inside_the_tunnel_only():
    app = make_app(collectors=tunnel_only_collectors())
    async with app.run_test(size=(80, 24)) as pilot:
        await polls(pilot, 8)
        lines = screen_lines(app)
        assert lines[1] == ("latency rises in the tunnel only: +36 ms (outside +8): "
                            "the peer's side or path")
        assert app.collectors["verdict"].last.worst.cause == "tunnel_path"


# --- the panels' titles, the sparklines, the plot's axes ----------------------

def stepped_fake_collectors() -> dict:
    """`keel tui --fake`'s collectors on a clock that steps a quarter second a
    read: the fake router's counters move, deterministically."""
    from keel.metrics.live import fake_collectors

    clock = StepClock(1_800_000_000.0, 0.25)
    return fake_collectors(clock=clock, wallclock=clock)


async def polls(pilot, n: int) -> None:
    await settle(pilot)
    for _ in range(n):
        await pilot.press("r")
        await settle(pilot)


@pytest.mark.parametrize(("profile", "size"), [(CONSOLE, (80, 24)), (MODERN, (120, 40))])
@asynctest
async def test_every_panel_has_its_title_on_its_border(profile, size):
    app = make_app(profile)
    async with app.run_test(size=size) as pilot:
        await two_polls(pilot)
        lines = screen_lines(app)
        for name, title in panels.TITLES.items():
            frame = framed(app, name)
            assert frame.border_title.strip().startswith(title)
            row = lines[frame.region.y]  # the frame's top border carries it
            assert title in row[frame.region.x:frame.region.right]
        # the verdict stays on top
        assert framed(app, "verdict").region.y == 0
        assert lines[1].startswith("healthy")


@pytest.mark.parametrize(("profile", "size", "bars"),
                         [(CONSOLE, (80, 24), "_" + CONSOLE_BLOCKS),
                          (MODERN, (120, 40), "\u2581\u2582\u2583\u2584\u2585\u2586\u2587\u2588")])
@asynctest
async def test_sparklines_draw_the_tunnels_rates(profile, size, bars):
    app = make_app(profile, collectors=stepped_fake_collectors())
    async with app.run_test(size=size) as pilot:
        await polls(pilot, 12)
        snap = app.collectors["tunnel"].last
        assert len(snap.rx_history) >= 10 and min(snap.rx_history) > 0
        lines = screen_lines(app)
        for name, history in (("rx", snap.rx_history), ("tx", snap.tx_history)):
            widget = spark(app, name)
            assert isinstance(widget, Sparkline)  # Textual's own widget
            assert tuple(widget.data) == history
            region = widget.region
            start = region.x + len(widget.label)  # the bars, right of the label
            drawn = "".join(lines[y][start:region.right] for y in range(region.y, region.bottom))
            assert set(drawn.strip()) and set(drawn.strip()) <= set(bars + " ")
            # newest at the right: the last column holds a bar
            assert lines[region.bottom - 1][region.right - 1] in bars
            label = lines[region.y][region.x:start]
            assert label.startswith(name) and label.strip().endswith("M")
        assert "bit/s, last" in app.screen.query_one("#tunnel-box", Frame).border_title
        if profile is CONSOLE:  # with the bars drawn, still only the VGA font's glyphs
            assert set("".join(lines)) <= CONSOLE_FONT


@asynctest
async def test_the_latency_plot_has_a_linear_ms_axis_and_a_time_axis():
    app = make_app(collectors=stepped_fake_collectors())
    async with app.run_test(size=(80, 24)) as pilot:
        await polls(pilot, 15)
        plot = app.screen.query_one("#plot", LatencyPlot)
        lines = screen_lines(app)
        rows = lines[plot.region.y:plot.region.bottom]
        assert len(rows) >= 5
        # the y axis: labelled ms ticks, evenly spaced in value and in rows
        ticks = [(y, float(row[:LABEL_WIDTH - 1])) for y, row in enumerate(rows[:-1])
                 if row[:LABEL_WIDTH - 1].strip()]
        assert len(ticks) >= 3 and ticks[-1][1] == 0
        rows_apart = {b[0] - a[0] for a, b in itertools.pairwise(ticks)}
        ms_apart = {a[1] - b[1] for a, b in itertools.pairwise(ticks)}
        assert len(rows_apart) == 1 and len(ms_apart) == 1  # linear
        assert ms_apart.pop() / rows_apart.pop() == plot.model.step
        # the grade lines at idle + each bound, named at the right
        idle = plot.model.baseline
        for bound in GRADE_LINES_MS:
            y = plot.model.row(idle + bound)
            named = plot.model.line_rows()[y]  # the highest bound of those on the row
            assert named >= bound and rows[y].rstrip().endswith(f" +{named:g}")
        # the time axis: seconds ago, and now where the newest column is
        axis = rows[-1]
        assert "now+" in axis and "-10s+" in axis
        now_x = axis.index("now+") + len("now")
        assert now_x - LABEL_WIDTH == plot.model.cols - 1  # scrolling: the newest is the last
        # seconds ago in the order they read, oldest at the left
        ages = [int(a) for a in re.findall(r" -(\d+)s\+", axis)]
        assert len(ages) >= 5 and ages == sorted(ages, reverse=True)
        assert axis.index(f" -{ages[-1]}s+") < axis.index(" now+")
