"""Pilot tests of adaptive CAKE on the console: the dashboard's CAKE panel
(the range, the rate and the throughput of the last minutes), still all at
80x24."""

from __future__ import annotations

import pytest

from keel.ui.bars import CONSOLE_BARS, MODERN_BARS
from keel.ui.profile import CONSOLE, CONSOLE_BLOCKS, MODERN
from keel.ui.widgets.frame import Frame
from keel.ui.widgets.lines import LinesPanel
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
    from keel.ui.dialogs import ConfirmScreen
    from keel.ui.screens.selftest import RatesConfirmScreen
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
    from keel.ui.screens.selftest import RatesConfirmScreen

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
    from keel.ui.screens.selftest import SelfTestScreen

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
    from keel.ui.screens.selftest import SelfTestScreen

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


# --- the setup wizard: adaptive offered where the line is measured ----------------------

@asynctest
async def test_the_wizard_measures_then_applies_adaptive_cake(tmp_path):
    from keel.ui.screens.selftest import RatesConfirmScreen, SelfTestScreen
    from keel.ui.selftest import MeasuredRates, RecommendedRates
    from tests.fixtures.ports import TWO_PORTS
    from tests.ui.test_ui_setup import KEY, FakeKeel, keys, open_wizard, wizard

    fake, hooks = FakeKeel(), Applied()
    app = make_app(**hooks.kwargs())
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_wizard(app, pilot, wizard(tmp_path, fake, TWO_PORTS))
        await keys(pilot, "enter", "enter", "enter", "enter", "enter", "enter")
        await keys(pilot, "up", "enter", "enter", KEY, "enter", "203.0.113.2:51820",
                   "enter", "enter")
        assert "step 6/7: Shaping" in screen_lines(app)[0]
        text = "\n".join(screen_lines(app))
        assert "( ) measure, then adaptive: CAKE follows the line" in text
        assert "(*) leave shaping off for now" in text  # off by default
        assert "not offered" not in text
        await keys(pilot, "up", "up", "up", "enter")  # measure, then adaptive
        assert screen.answers.shaping == "adaptive"
        assert "shaping    adaptive, once the self-test after setup measures the line" in \
            "\n".join(screen_lines(app))
        await keys(pilot, "enter", "y", "y", "enter")
        assert isinstance(app.screen, SelfTestScreen) and app.screen.prefer_adaptive
        await settle(pilot)
        assert app.runner.started[-1][0] == "throughput"
        assert "[a] adaptive" in "\n".join(screen_lines(app))
        await pilot.press("a")
        await pilot.pause()
        assert isinstance(app.screen, RatesConfirmScreen)
        await pilot.press("y")
        await settle(pilot)
        assert hooks.adaptive == [(RecommendedRates(38_000_000, 85_000_000),
                                   MeasuredRates(41_700_000, 92_100_000))]


@asynctest
async def test_the_wizard_says_why_a_hub_is_not_offered_adaptive(tmp_path):
    from tests.ui.test_ui_setup import VPS_PORT, FakeKeel, keys, open_wizard, wizard

    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_wizard(app, pilot, wizard(tmp_path, FakeKeel(), VPS_PORT))
        await keys(pilot, "enter", "enter", "down", "enter", "198.51.100.7/32",
                   "enter", "198.51.100.1", "enter")
        await keys(pilot, "up", "up", "enter", "enter", "enter")  # pair; address, port
        assert "step 5/6: Shaping" in screen_lines(app)[0]
        text = "\n".join(screen_lines(app))
        assert "measure, then adaptive" not in text
        assert "adaptive CAKE: not offered: it runs on the edge (the edge probes the hub)" \
            in text
        assert "adaptive" not in screen.answers.shaping


@asynctest
async def test_an_edge_that_pairs_measures_then_prefers_adaptive(tmp_path):
    from keel.ui.screens.pairing import PairingScreen
    from keel.ui.screens.selftest import SelfTestScreen
    from tests.fixtures.ports import TWO_PORTS
    from tests.ui.test_ui_setup import FakeKeel, FakePairing, keys, open_wizard, wizard

    pairing = FakePairing()
    app = make_app(**Applied().kwargs())
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_wizard(app, pilot, wizard(tmp_path, FakeKeel(), TWO_PORTS,
                                                      pair=pairing))
        await keys(pilot, "enter", "enter", "enter", "enter", "enter", "enter")
        await keys(pilot, "up", "up", "enter")  # pair with the hub
        await keys(pilot, "203.0.113.2", "enter", "1234-5678", "enter")
        assert "step 6/7: Shaping" in screen_lines(app)[0]
        await keys(pilot, "up", "up", "up", "enter")
        assert screen.answers.shaping == "adaptive"
        await keys(pilot, "enter", "y", "y", "enter")
        assert isinstance(app.screen, PairingScreen)
        assert pairing.calls == [("edge", "203.0.113.2", "1234-5678")]
        await keys(pilot, "enter")  # paired: then the throughput self-test
        assert isinstance(app.screen, SelfTestScreen) and app.screen.prefer_adaptive
