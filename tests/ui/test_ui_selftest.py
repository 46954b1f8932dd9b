"""Pilot tests of the self-test screen, the root-shell gate, the profile."""

from __future__ import annotations

from keel.selftest.events import Failed, Progress
from keel.ui.dialogs import ConfirmScreen, MessageScreen
from keel.ui.profile import CONSOLE, MODERN
from keel.ui.screens.access import PasswordScreen
from keel.ui.screens.selftest import SelfTestScreen
from keel.ui.selftest import FakeSelfTestRunner, RecommendedRates
from keel.ui.widgets.lines import LinesPanel
from tests.ui.uihelpers import (
    asynctest,
    fixture_collectors,
    make_app,
    screen_lines,
    settle,
    shell_with,
)


def text_of(app, name: str) -> str:
    return app.screen.query_one(f"#{name}", LinesPanel).text


@asynctest
async def test_bufferbloat_shows_progress_grade_and_applies_rates():
    applied = []

    def apply_rates(rates: RecommendedRates) -> str:
        applied.append(rates)
        return "applied: rolls back in 60 s unless confirmed"

    runner = FakeSelfTestRunner()
    app = make_app(runner=runner, apply_rates=apply_rates)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("s")
        await settle(pilot)
        assert isinstance(app.screen, SelfTestScreen)
        await pilot.press("a")  # nothing to apply yet
        await pilot.pause()
        assert "run a test first" in "\n".join(screen_lines(app))
        await pilot.press("c")
        await settle(pilot)
        assert runner.started == [("bufferbloat", {"compare": True})]
        assert text_of(app, "st-status").splitlines() == [
            "bufferbloat done", "[##############################] 100%"]
        grade = text_of(app, "grade").splitlines()
        assert grade[0].rstrip() == " ###"  # the big 'A' in '#' glyphs on the console
        assert grade[-1] == "grade A+"
        summary = text_of(app, "summary")
        assert "CAKE bypassed: +412 ms (grade F)" in summary
        assert "\n".join(screen_lines(app)).isascii()
        await pilot.press("t")  # a bufferbloat run recommends no rates: throughput does
        await settle(pilot)
        summary = text_of(app, "summary")
        assert "CAKE: egress 38.0 ingress 85.0 Mbit/s  [a] apply" in summary
        await pilot.press("a")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmScreen)
        assert "egress 38.0 Mbit/s and ingress 85.0 Mbit/s" in app.screen.question
        await pilot.press("y")
        await settle(pilot)
        assert applied == [RecommendedRates(38_000_000, 85_000_000)]
        assert text_of(app, "st-status").startswith("applied: rolls back in 60 s")


class CountingLatency:
    """The dashboard's latency collector, counting its pingers' starts and stops."""

    def __init__(self, inner) -> None:
        self.inner, self.calls = inner, []

    def start(self) -> None:
        self.calls.append("start")

    def stop(self) -> None:
        self.calls.append("stop")

    def poll(self):
        return self.inner.poll()


@asynctest
async def test_the_dashboards_pingers_pause_while_a_test_probes():
    collectors = fixture_collectors()
    latency = collectors["latency"] = CountingLatency(collectors["latency"])
    runner = FakeSelfTestRunner(delay=0.5)
    app = make_app(collectors=collectors, runner=runner)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        assert latency.calls == ["start"] and app.latency_running
        await pilot.press("s", "b")
        await pilot.pause()
        assert latency.calls == ["start", "stop"] and not app.latency_running
        await settle(pilot)
        assert text_of(app, "st-status").startswith("bufferbloat done")
        assert latency.calls == ["start", "stop", "start"] and app.latency_running


@asynctest
async def test_keep_confirms_what_was_applied():
    kept = []
    app = make_app(keep=lambda: kept.append(True) or "confirmed")
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("s", "k")
        await settle(pilot)
        assert kept == [True]
        assert text_of(app, "st-status").startswith("confirmed")


@asynctest
async def test_declined_confirmation_applies_nothing():
    applied = []
    app = make_app(apply_rates=lambda r: applied.append(r) or "done")
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("s", "t")
        await settle(pilot)
        assert "download      down 92.1 up 0.0 Mbit/s" in text_of(app, "summary")
        assert text_of(app, "grade") == ""  # throughput has no grade
        await pilot.press("a", "n")
        await settle(pilot)
        assert applied == []


@asynctest
async def test_progress_bar_midway_and_failure():
    runner = FakeSelfTestRunner(scripts={
        "mtu": [Progress("mtu", "probing", 0.5, "probing: DF pings 1420..1280")],
        "throughput": [Failed("throughput", "iperf3: connection refused")]})
    app = make_app(runner=runner)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("s", "m")
        await settle(pilot)
        assert text_of(app, "st-status").splitlines() == [
            "probing: DF pings 1420..1280", "[###############...............]  50%"]
        await pilot.press("t")
        await settle(pilot)
        assert text_of(app, "summary") == "iperf3: connection refused"
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen.id == "dashboard"


@asynctest
async def test_selftest_screen_plots_the_tests_own_samples():
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("s")
        await settle(pilot)
        assert "the test's own probes" in text_of(app, "latency")  # no pinger of its own
        assert "*" not in "\n".join(app.screen.query_one("#plot").model.lines())
        await pilot.press("b")
        await settle(pilot)
        assert text_of(app, "latency").startswith("* tunnel  10.99.0.2")
        assert app.screen.query_one("#latency-box").border_title.strip().startswith("LATENCY")
        assert "*" in "\n".join(app.screen.query_one("#plot").model.lines())


@asynctest
async def test_big_grade_in_half_blocks_outside_the_console():

    app = make_app(MODERN)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("s", "b")
        await settle(pilot)
        grade = text_of(app, "grade").splitlines()
        assert len(grade) == 4 and "\u2588" in grade[1] and grade[3] == "grade A+"


# --- the root shell --------------------------------------------------------

@asynctest
async def test_shell_after_the_right_password(tmp_path):
    shell = shell_with(tmp_path, "$6$salt$hash")
    app = make_app(shell=shell)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("exclamation_mark")
        await pilot.pause()
        assert isinstance(app.screen, PasswordScreen)
        await pilot.press(*"guess", "enter")
        await settle(pilot)
        assert "wrong password" in "\n".join(screen_lines(app))
        assert shell.launched == 0
        await pilot.press(*"s3cret", "enter")
        await settle(pilot)
        assert shell.launched == 1
        assert app.screen.id == "dashboard"


@asynctest
async def test_no_shell_without_a_root_password(tmp_path):
    shell = shell_with(tmp_path, "")
    app = make_app(shell=shell)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("exclamation_mark")
        await pilot.pause()
        assert isinstance(app.screen, MessageScreen)
        assert "root has no password" in app.screen.text
        assert "Set one first" in app.screen.text
        await pilot.press("enter")
        assert shell.launched == 0


@asynctest
async def test_three_wrong_passwords_close_the_dialog(tmp_path):
    shell = shell_with(tmp_path, "$6$salt$hash")
    app = make_app(shell=shell)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("exclamation_mark")
        for _ in range(3):
            await pilot.pause()
            await pilot.press("x", "enter")
            await settle(pilot)
        assert app.screen.id == "dashboard"
        assert "no shell: wrong password" in screen_lines(app)[-1]
        assert shell.launched == 0


# --- profile and ping -------------------------------------------------------

@asynctest
async def test_console_app_uses_the_ansi_theme():
    app = make_app(CONSOLE)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert app.theme == "textual-ansi" and app.ansi_color


@asynctest
async def test_a_password_check_that_breaks_says_so_and_shows_no_secret(tmp_path):
    shell = shell_with(tmp_path, "$6$salt$hash")

    def broken(password: str) -> bool:
        raise OSError(f"cannot read {shell.shadow_path}: $6$salt$hash")

    shell.verify = broken  # type: ignore[method-assign]
    app = make_app(shell=shell)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("exclamation_mark")
        await pilot.pause()
        await pilot.press(*"s3cret", "enter")
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()
        shown = "\n".join(screen_lines(app))
        assert "could not check the password (OSError)" in shown
        assert "$6$" not in shown and "s3cret" not in shown
        assert isinstance(app.screen, PasswordScreen) and shell.launched == 0
        assert not app.screen.query_one("#password").disabled
