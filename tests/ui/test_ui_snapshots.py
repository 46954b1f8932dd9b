"""Snapshots (pytest-textual-snapshot): 80x24 console profile and 120x40 modern.

Update with `python3 -m pytest tests/ui --snapshot-update` after a deliberate
change of the layout, and look at the SVGs before committing them."""

from __future__ import annotations

from keel.ui.profile import CONSOLE, MODERN
from tests.ui.uihelpers import make_app, settle, two_polls


async def after_selftest(pilot) -> None:
    await two_polls(pilot)
    await pilot.press("s", "b")
    await settle(pilot)


def test_dashboard_console_80x24(snap_compare):
    assert snap_compare(make_app(CONSOLE), terminal_size=(80, 24), run_before=two_polls)


def test_dashboard_modern_120x40(snap_compare):
    assert snap_compare(make_app(MODERN), terminal_size=(120, 40), run_before=two_polls)


def test_selftest_console_80x24(snap_compare):
    assert snap_compare(make_app(CONSOLE), terminal_size=(80, 24), run_before=after_selftest)


def test_selftest_modern_120x40(snap_compare):
    assert snap_compare(make_app(MODERN), terminal_size=(120, 40), run_before=after_selftest)
