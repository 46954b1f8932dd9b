"""Pilot tests of adaptive CAKE on the console: the dashboard's CAKE panel
(the range, the rate and the throughput of the last minutes), still all at
80x24."""

from __future__ import annotations

import pytest

from keel.ui.frame import Frame
from keel.ui.lines import LinesPanel
from keel.ui.profile import CONSOLE, CONSOLE_BLOCKS, MODERN
from keel.ui.spark import CONSOLE_BARS, MODERN_BARS
from tests.ui.uihelpers import StepClock, asynctest, make_app, screen_lines, settle

CONSOLE_FONT = {chr(c) for c in range(32, 127)} | set(CONSOLE_BLOCKS)


def adaptive_fake_collectors() -> dict:
    """`keel tui --fake`'s collectors with adaptive CAKE at work, on a clock
    that steps a quarter second a read (deterministic)."""
    from keel.metrics.live import fake_collectors

    clock = StepClock(1_800_000_000.0, 0.25)
    return fake_collectors(clock=clock, wallclock=clock, adaptive=True)


async def polls(pilot, n: int) -> None:
    await settle(pilot)
    for _ in range(n):
        await pilot.press("r")
        await settle(pilot)


@pytest.mark.parametrize(("profile", "size", "bars"),
                         [(CONSOLE, (80, 24), CONSOLE_BARS), (MODERN, (120, 40), MODERN_BARS)])
@asynctest
async def test_the_cake_panel_draws_adaptive_cake(profile, size, bars):
    app = make_app(profile, collectors=adaptive_fake_collectors())
    async with app.run_test(size=size) as pilot:
        await polls(pilot, 8)
        snap = app.collectors["cake"].last
        assert snap.adaptive
        lines = screen_lines(app)
        assert len(lines) == size[1] and all(len(line) <= size[0] for line in lines)
        text = "\n".join(lines)
        for title in ("NOW", "TUNNEL", "CPU", "LATENCY", "CAKE", "TUNING"):
            assert f" {title} " in text
        assert lines[-1].startswith("[s]elftest")
        cake = app.screen.query_one("#cake", LinesPanel)
        assert cake.border_title.strip() == "CAKE  bit/s, adaptive: last 3 min"
        panel = cake.plain_lines
        assert len(panel) == 7  # the head, then three lines a direction
        for row, d in ((2, snap.directions[0]), (5, snap.directions[1])):
            assert panel[row].startswith("  adaptive 20.0-44.0M rate ")
            rate, thru = panel[row].split(" rate ")[1].split(" thru ")
            assert rate.strip() and set(rate.strip() + thru.strip()) <= set(bars)
            assert rate[-1] in bars  # the newest at the right
            assert len(d.rate_history) >= 8
        # the rows are on the screen, within the panel's width
        region = cake.region
        assert panel[2] in lines[region.y + 3][region.x:region.right]  # under the title
        if profile is CONSOLE:  # the VGA font's glyphs only
            assert set("".join(lines)) <= CONSOLE_FONT


@asynctest
async def test_a_fixed_cake_keeps_its_title_and_lines():
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await polls(pilot, 2)
        cake = app.screen.query_one("#cake", LinesPanel)
        assert cake.border_title.strip() == "CAKE  bit/s"
        assert len(cake.plain_lines) == 5
        assert "adaptive" not in "\n".join(screen_lines(app))
        assert isinstance(app.screen.query_one("#tunnel-box"), Frame)
