"""Pilot tests of the settings screens at 80x24 on the console profile: forms
from the schema, the loader's message as a value is typed, the review (diff
and dry-run plan), apply with confirm and its countdown, and the revisions.
keel's commands go to a fake `run`: no system is touched."""

from __future__ import annotations

import asyncio
import subprocess
from pathlib import Path

import keel.config
from keel.apply.rates import KEEL
from keel.config.dump import to_toml
from keel.config.load import parse_config
from keel.state.revisions import RevisionStore
from keel.ui import settings_model as model
from keel.ui.config_actions import ConfigActions
from keel.ui.dialogs import ConfirmScreen, CountdownScreen, ReviewScreen
from keel.ui.screens.revisions import RevisionsScreen
from keel.ui.screens.settings import SettingsScreen
from tests.ui.uihelpers import asynctest, make_app, screen_lines, settle

EDGE = (Path(keel.config.__file__).parent / "examples" / "edge.toml").read_text()
PLAN = "cake: wg0 egress 4500 -> 50000 kbit/s"
UPLOAD = "wan.shaping.upload_kbit"


class FakeKeel:
    """`python -m keel.cli ...` as a list of the commands asked for."""

    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    def __call__(self, argv: list[str]) -> subprocess.CompletedProcess:
        assert argv[:len(KEEL)] == list(KEEL)
        command = argv[len(KEEL):]
        self.calls.append(command)
        out = {"apply": PLAN if "--dry-run" in command else
               "applied; rolls back to revision 2 in 120 s unless `keel confirm` comes first",
               "confirm": "confirmed", "rollback": "recorded revision 4"}[command[0]]
        return subprocess.CompletedProcess(argv, 0, stdout=out + "\n", stderr="")

    def commands(self) -> list[str]:
        return [" ".join(c) for c in self.calls]


def text_of(app) -> str:
    text = "\n".join(screen_lines(app))
    assert text.isascii()  # the console profile draws nothing outside ASCII
    return text


def store_with_three(tmp_path) -> RevisionStore:
    store = RevisionStore(tmp_path / "revisions")
    config = parse_config(EDGE).config
    store.record(to_toml(config), "apply")
    data = model.with_value(model.as_dict(config), UPLOAD, "5000")
    store.record(model.proposed_text(data), "apply")
    data = model.with_value(data, "firewall.open_udp", "5353")
    store.record(model.proposed_text(data), "apply")
    return store


async def open_settings(app, pilot, tmp_path, fake: FakeKeel, confirm_s: float = 120):
    actions = ConfigActions(run=fake, proposed=tmp_path / "run" / "proposed.toml")
    screen = SettingsScreen(EDGE, actions, store_with_three(tmp_path), confirm_s=confirm_s)
    app.push_screen(screen)
    await settle(pilot)
    return screen


async def type_into(pilot, screen: SettingsScreen, path: str, text: str) -> None:
    """Focus the field, set all but the last character, type the last."""
    widget = screen.show_field(path)
    await pilot.pause()
    widget.value = text[:-1]
    widget.action_end()
    await pilot.press(text[-1])
    await settle(pilot)


@asynctest
async def test_edit_check_review_apply_and_keep(tmp_path):
    fake = FakeKeel()
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_settings(app, pilot, tmp_path, fake)
        seen = []
        for name, _ in model.sections():  # a key of every section, one tab each
            first = next(f for f in screen.fields if f.section == name)
            assert first.key in text_of(app), name
            seen.append(name)
            await pilot.press("f3")
        assert seen[:3] == ["system", "wan", "lan"]

        await type_into(pilot, screen, UPLOAD, "999999999")
        assert f"{UPLOAD}: outside 0-100000000 kbit/s" in text_of(app)
        assert screen.query_one("#v-wan-shaping-upload_kbit").has_class("invalid")
        await pilot.press("f5")
        await settle(pilot)
        assert app.screen is screen  # nothing reviewed, nothing applied
        assert "not reviewed: 1 problem" in text_of(app)

        await type_into(pilot, screen, UPLOAD, "50000")
        assert "outside" not in text_of(app)
        assert not screen.query_one("#v-wan-shaping-upload_kbit").has_class("invalid")
        await pilot.press("f5")
        await settle(pilot)
        assert isinstance(app.screen, ReviewScreen)
        text = text_of(app)
        assert f"-{UPLOAD} = 4500" in text and f"+{UPLOAD} = 50000" in text
        assert PLAN in text
        proposed = tmp_path / "run" / "proposed.toml"
        assert parse_config(proposed.read_text()).config.wan.shaping.upload_kbit == 50000
        assert fake.commands() == [f"apply --dry-run {proposed}"]

        await pilot.press("y")
        await settle(pilot)
        assert isinstance(app.screen, CountdownScreen)
        assert fake.commands()[-1] == f"apply --confirm 120 {proposed}"
        text = text_of(app)
        assert "KEEP THESE SETTINGS?" in text and "[####" in text
        assert "rolls back to revision 3 by itself" in text
        await pilot.press("y")
        await settle(pilot)
        assert fake.commands()[-1] == "confirm"
        assert "kept: these settings stay" in text_of(app)
        await pilot.press("enter")
        await settle(pilot)
        assert app.screen is screen and "kept" in text_of(app)
        assert screen.edits == {} and screen.config.wan.shaping.upload_kbit == 50000


@asynctest
async def test_no_answer_rolls_back_and_the_form_shows_the_config_in_force(tmp_path):
    fake = FakeKeel()
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_settings(app, pilot, tmp_path, fake, confirm_s=1.5)
        await type_into(pilot, screen, "wan.interface", "eth 0")
        assert "wan.interface: not an interface name" in text_of(app)
        await pilot.press("f5")
        await settle(pilot)
        assert app.screen is screen and fake.calls == []

        await type_into(pilot, screen, "wan.interface", "eth2")
        assert "not an interface name" not in text_of(app)
        await pilot.press("f5")
        await settle(pilot)
        assert '+wan.interface = "eth2"' in text_of(app)
        await pilot.press("y")
        await settle(pilot)
        assert isinstance(app.screen, CountdownScreen)
        await asyncio.sleep(1.8)
        await pilot.pause()
        assert "rolled back (no answer)" in text_of(app)
        assert not any(c.startswith(("confirm", "rollback")) for c in fake.commands())
        await pilot.press("y")  # too late: nothing is kept any more
        await pilot.press("enter")
        await settle(pilot)
        assert app.screen is screen
        assert screen.query_one("#v-wan-interface").value == "eth0"
        assert screen.edits == {}
        assert "confirm" not in fake.commands()


@asynctest
async def test_no_rolls_back_at_once(tmp_path):
    fake = FakeKeel()
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_settings(app, pilot, tmp_path, fake)
        screen.show_field("nat.masquerade_wan")
        await pilot.press("enter")  # the switch: off
        await settle(pilot)
        assert screen.edits == {"nat.masquerade_wan": False}
        await pilot.press("q")  # the app's quit key: not on this form
        await settle(pilot)
        assert app.is_running and app.screen is screen
        assert "[esc] leaves the settings" in text_of(app)
        await pilot.press("f5")
        await settle(pilot)
        assert "+nat.masquerade_wan = false" in text_of(app)
        await pilot.press("y")
        await settle(pilot)
        await pilot.press("n")
        await settle(pilot)
        assert fake.commands()[-2:] == ["rollback 3", "confirm"]
        assert "rolled back to revision 3" in text_of(app)
        await pilot.press("enter")
        await settle(pilot)
        assert app.screen is screen and screen.edits == {}


@asynctest
async def test_revisions_lists_and_rolls_back_to_one(tmp_path):
    fake = FakeKeel()
    store = store_with_three(tmp_path)
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        app.push_screen(RevisionsScreen(store, ConfigActions(run=fake,
                                                             proposed=tmp_path / "p.toml")))
        await settle(pilot)
        lines = screen_lines(app)
        text = text_of(app)
        rows = [line for line in lines if line.strip()[:1] in "*123" and "apply" in line]
        assert len(rows) == 3 and rows[0].lstrip().startswith("*")  # newest first, in force
        assert UPLOAD in text and "firewall.open_udp" in text and "(first)" in text
        await pilot.press("enter")  # the one in force
        await settle(pilot)
        assert "revision 3 is the one in force" in text_of(app) and fake.calls == []
        await pilot.press("down", "down", "enter")
        await settle(pilot)
        assert isinstance(app.screen, ConfirmScreen)
        assert "Roll back to revision 1" in text_of(app)
        await pilot.press("y")
        await settle(pilot)
        assert fake.commands() == ["rollback 1"]
        assert "rolled back to revision 1: recorded revision 4" in text_of(app)


@asynctest
async def test_the_dashboard_opens_settings_and_revisions(tmp_path, monkeypatch):
    from keel.model import reading
    from keel.ui.screens.revisions import RevisionsScreen
    from keel.ui.screens.settings import SettingsScreen

    user = tmp_path / "keel.toml"
    user.write_text('[wan]\ninterface = "eth0"\n')
    monkeypatch.setattr(reading, "config_in_force", lambda: user)
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("c")
        await settle(pilot)
        assert isinstance(app.screen, SettingsScreen)
        await pilot.press("escape")
        await settle(pilot)
        await pilot.press("h")
        await settle(pilot)
        assert isinstance(app.screen, RevisionsScreen)
