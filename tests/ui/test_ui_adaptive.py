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


# --- the throughput self-test's [a]: fixed rates, or adaptive CAKE around them ---------

class Applied:
    """The app's apply hooks, recording what they were asked."""

    def __init__(self, refusal: str | None = None) -> None:
        self.fixed: list = []
        self.adaptive: list = []
        self.refusal = refusal

    def kwargs(self) -> dict:
        return {"apply_rates": lambda r: self.fixed.append(r) or "applied fixed",
                "apply_adaptive": lambda r, m: self.adaptive.append((r, m))
                or "applied adaptive", "adaptive_offer": lambda: self.refusal}


async def throughput_then_a(pilot, app, screen=None) -> None:
    if screen is None:
        await pilot.press("s")
    else:
        app.push_screen(screen)
    await settle(pilot)
    await pilot.press("t")
    await settle(pilot)
    await pilot.press("a")
    await pilot.pause()


@asynctest
async def test_a_then_a_applies_adaptive_cake_by_the_rule():
    from keel.ui.screens import ConfirmScreen, RatesConfirmScreen
    from keel.ui.selftest import MeasuredRates, RecommendedRates

    hooks = Applied()
    app = make_app(**hooks.kwargs())
    async with app.run_test(size=(80, 24)) as pilot:
        await throughput_then_a(pilot, app)
        dialog = app.screen
        assert isinstance(dialog, RatesConfirmScreen) and isinstance(dialog, ConfirmScreen)
        assert "egress 38.0 Mbit/s and ingress 85.0 Mbit/s" in dialog.question
        text = "\n".join(screen_lines(app))
        # base the recommendation, max what the test carried, min half the base
        assert "[a] adaptive: CAKE follows the line (Mbit/s min-base-max)" in text
        assert "egress 19.0-38.0-41.7, ingress 42.5-85.0-92.1" in text
        assert text.isascii()
        await pilot.press("a")
        await settle(pilot)
        assert hooks.fixed == []
        assert hooks.adaptive == [(RecommendedRates(38_000_000, 85_000_000),
                                   MeasuredRates(41_700_000, 92_100_000))]
        status = app.screen.query_one("#st-status", LinesPanel).text
        assert status.startswith("applied adaptive")


@asynctest
async def test_yes_still_applies_the_rates_fixed():
    from keel.ui.selftest import RecommendedRates

    hooks = Applied()
    app = make_app(**hooks.kwargs())
    async with app.run_test(size=(80, 24)) as pilot:
        await throughput_then_a(pilot, app)
        assert "[y] yes, or [f]: fixed at these rates" in "\n".join(screen_lines(app))
        await pilot.press("y")
        await settle(pilot)
        assert hooks.fixed == [RecommendedRates(38_000_000, 85_000_000)]
        assert hooks.adaptive == []
        await pilot.press("a", "f")  # [f] is fixed too
        await settle(pilot)
        assert len(hooks.fixed) == 2 and hooks.adaptive == []


@asynctest
async def test_not_offered_without_a_peer_to_probe_and_says_why():
    from keel.ui.screens import RatesConfirmScreen

    hooks = Applied(refusal="no tunnel peer with an endpoint to probe")
    app = make_app(**hooks.kwargs())
    async with app.run_test(size=(80, 24)) as pilot:
        await throughput_then_a(pilot, app)
        assert "[a] adaptive: not offered: no tunnel peer with an endpoint to probe" in \
            app.screen.choices()
        assert "not offered: no tunnel peer" in "\n".join(screen_lines(app))  # wrapped
        await pilot.press("a")  # refused: the dialog stays
        await pilot.pause()
        assert isinstance(app.screen, RatesConfirmScreen)
        await pilot.press("n")
        await settle(pilot)
        assert hooks.fixed == hooks.adaptive == []


@asynctest
async def test_the_setups_choice_makes_yes_adaptive():
    from keel.ui.screens import SelfTestScreen

    hooks = Applied()
    app = make_app(**hooks.kwargs())
    async with app.run_test(size=(80, 24)) as pilot:
        await throughput_then_a(pilot, app, SelfTestScreen(prefer_adaptive=True))
        text = "\n".join(screen_lines(app))
        assert "[y] yes, or [a]: adaptive, chosen in setup (Mbit/s min-base-max)" in text
        assert "[f] fixed at these rates instead" in text
        await pilot.press("y")
        await settle(pilot)
        assert len(hooks.adaptive) == 1 and hooks.fixed == []
        summary = app.screen.query_one("#summary", LinesPanel).text
        assert "CAKE: egress 38.0 ingress 85.0 Mbit/s  [a] adaptive" in summary
        await pilot.press("a", "f")
        await settle(pilot)
        assert len(hooks.fixed) == 1


@asynctest
async def test_the_setups_choice_is_fixed_when_adaptive_is_not_offered():
    from keel.ui.screens import SelfTestScreen

    hooks = Applied(refusal="the tunnel is off")
    app = make_app(**hooks.kwargs())
    async with app.run_test(size=(80, 24)) as pilot:
        await throughput_then_a(pilot, app, SelfTestScreen(prefer_adaptive=True))
        text = "\n".join(screen_lines(app))
        assert "[y] yes, or [f]: fixed at these rates" in text
        assert "not offered: the tunnel is off" in text
        await pilot.press("y")
        await settle(pilot)
        assert len(hooks.fixed) == 1 and hooks.adaptive == []
