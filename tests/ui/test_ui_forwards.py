"""Pilot tests of the port forwards on the tunnel screen ([t]) at 80x24 on
the console profile: the FORWARDS table from a snapshot taken in a worker
thread (and again while the screen is in front), shown with forwards or on
a hub; [f] adds one through a form checked by the loader, [x] removes the
one under the cursor; both reviewed and applied with confirm as the settings
are (keel's commands go to a fake `run`: no system is touched).

    python -m tests.ui.test_ui_forwards     prints the screen at 80x24
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import threading
from pathlib import Path

from keel.config.load import parse_config
from keel.forwards import edit
from keel.forwards.collect import ForwardRow, ForwardsSnapshot
from keel.pair.peers import PeerRow
from keel.state.revisions import RevisionStore
from keel.ui.config_actions import ConfigActions
from keel.ui.dialogs import ConfirmScreen, CountdownScreen, ReviewScreen
from keel.ui.screens.forwards import ForwardFormScreen, ForwardsPanel
from keel.ui.screens.peers import PeersScreen
from tests.ui.test_ui_settings import FakeKeel
from tests.ui.uihelpers import asynctest, make_app, screen_lines, settle
from tests.unit.forwards.forwards_configs import HUB_WITH_WEB

PEERS = [PeerRow("edge1", "10.77.0.2", "198.51.100.2:51820", 12.0, ("192.168.77.0/24",),
                 "DGDJOoNeCQAxEAKW/6R/XQpwi4FNhdoJTo1LLorzzRg=")]
ROWS = (ForwardRow("web", "tcp", "8080", "192.168.77.50:80", "edge1", "outer", 3, "answers"),
        ForwardRow("game", "both", "27015-27020", "192.168.77.60", "edge1", "outer", None,
                   "no answer"),
        ForwardRow("dns", "udp", "5353", "192.168.77.53:53", "edge1", "outer", 0,
                   "not checked"))
HUB_SNAPSHOT = ForwardsSnapshot(ROWS, hub=True, taken_at=1.0)


class Collector:
    """The snapshots to give, one a call (the last repeats); where each call ran."""

    def __init__(self, *snapshots: ForwardsSnapshot) -> None:
        self.snapshots = list(snapshots)
        self.threads: list[str] = []

    def __call__(self) -> ForwardsSnapshot:
        self.threads.append(threading.current_thread().name)
        return self.snapshots.pop(0) if len(self.snapshots) > 1 else self.snapshots[0]


def tunnel_screen(tmp_path: Path, collect: Collector, fake: FakeKeel | None = None,
                  every_s: float = 3600.0) -> PeersScreen:
    config = parse_config(HUB_WITH_WEB, "hub").config
    panel = ForwardsPanel(collect=collect, read_config=lambda: config,
                          actions=ConfigActions(run=fake or FakeKeel(),
                                                proposed=tmp_path / "proposed-forwards.toml"),
                          revisions=RevisionStore(tmp_path / "revisions"), every_s=every_s,
                          id="forwards-panel")
    return PeersScreen(read=lambda: (list(PEERS), ""), pair=lambda *a: (True, ""),
                       run=lambda argv: subprocess.CompletedProcess(argv, 0, "", ""),
                       forwards=panel, id="peers-screen")


def text_of(app) -> str:
    text = "\n".join(screen_lines(app))
    assert text.isascii()  # the console profile draws nothing outside ASCII
    return text


async def open_tunnel(app, pilot, screen: PeersScreen) -> None:
    await pilot.pause()
    app.push_screen(screen)
    await settle(pilot)


@asynctest
async def test_the_forwards_under_the_peers_at_80x24(tmp_path):
    collect = Collector(HUB_SNAPSHOT)
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await open_tunnel(app, pilot, tunnel_screen(tmp_path, collect))
        lines = screen_lines(app)
        text = text_of(app)
        assert "edge1" in text and "FORWARDS" in text
        head = next(line for line in lines if "target status" in line)
        for column in ("name", "proto", "public", "target", "via", "hits"):
            assert column in head
        web = next(line for line in lines if line.lstrip().startswith("web "))
        assert web.split() == ["web", "tcp", "8080", "192.168.77.50:80", "edge1", "3", "answers"]
        game = next(line for line in lines if line.lstrip().startswith("game "))
        assert game.split() == ["game", "both", "27015-27020", "192.168.77.60", "edge1", "-",
                                "no", "answer"]
        assert "not checked" in text and "[f] add a forward" in text
        assert all(len(line) <= 80 for line in lines)
    assert collect.threads and "MainThread" not in collect.threads  # in a worker


@asynctest
async def test_polled_again_while_the_screen_is_in_front_and_only_then(tmp_path):
    later = ForwardsSnapshot((ROWS[0].__class__(**{**ROWS[0].__dict__, "hits": 9}),),
                             hub=True)
    collect = Collector(HUB_SNAPSHOT, later)
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = tunnel_screen(tmp_path, collect, every_s=0.1)
        await open_tunnel(app, pilot, screen)
        for _ in range(100):
            await pilot.pause(0.02)
            if len(collect.threads) >= 2:
                break
        await settle(pilot)
        web = next(line for line in screen_lines(app) if line.lstrip().startswith("web "))
        assert web.split()[5] == "9"
        await pilot.press("f")  # the form in front: no polls under it
        await settle(pilot)
        polls = len(collect.threads)
        await pilot.pause(0.4)
        await settle(pilot)
        assert len(collect.threads) == polls
        assert isinstance(app.screen, ForwardFormScreen)


@asynctest
async def test_no_table_on_an_edge_without_forwards_and_a_hub_always_shows_it(tmp_path):
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = tunnel_screen(tmp_path, Collector(ForwardsSnapshot(hub=False)))
        await open_tunnel(app, pilot, screen)
        assert "FORWARDS" not in text_of(app)
        app.pop_screen()
        screen = tunnel_screen(tmp_path, Collector(ForwardsSnapshot(hub=True)))
        await open_tunnel(app, pilot, screen)
        text = text_of(app)
        assert "FORWARDS" in text and "no forwards yet." in text


@asynctest
async def test_unknown_hits_and_a_collector_that_fails_say_why(tmp_path):
    def broken() -> ForwardsSnapshot:
        raise RuntimeError("a bug")

    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        note = ForwardsSnapshot(ROWS[:1], hub=True,
                                counters_note="cannot list them (nft: not found)")
        await open_tunnel(app, pilot, tunnel_screen(tmp_path, Collector(note)))
        assert "hits unknown: cannot list them (nft: not found)" in text_of(app)
        app.pop_screen()
        screen = tunnel_screen(tmp_path, Collector(HUB_SNAPSHOT))
        screen.forwards.collect = broken
        await open_tunnel(app, pilot, screen)
        assert screen.forwards.snapshot is not None
        assert screen.forwards.snapshot.problem == "forwards: cannot collect them (RuntimeError)"


@asynctest
async def test_add_a_forward_reviewed_and_applied_with_confirm(tmp_path):
    fake = FakeKeel()
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = tunnel_screen(tmp_path, Collector(HUB_SNAPSHOT), fake)
        await open_tunnel(app, pilot, screen)
        await pilot.press("f")
        await settle(pilot)
        form = app.screen
        assert isinstance(form, ForwardFormScreen)
        assert "ADD A FORWARD" in text_of(app)
        await pilot.press(*"game", "tab")
        form.query_one("#fwd-protocol").value = "both"
        form.query_one("#fwd-port").value = "27015-27020"
        form.query_one("#fwd-to").value = "192.168.77.60"
        form.query_one("#fwd-via").value = "edge1"
        form.query_one("#fwd-via").focus()
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, ReviewScreen)
        text = text_of(app)
        assert '+forward.name = "game"' in text and '+forward.port = "27015-27020"' in text
        assert "cake: wg0 egress" in text  # the fake dry run's plan
        await pilot.press("y")
        await settle(pilot)
        assert isinstance(app.screen, CountdownScreen)
        await pilot.press("y")
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
        assert app.screen is screen
        assert "kept: these settings stay" in text_of(app)
    proposed = tmp_path / "proposed-forwards.toml"
    config = parse_config(HUB_WITH_WEB, "hub").config
    # the same change as `keel forwards add game --port 27015-27020 ...`
    assert proposed.read_text() == edit.add_forward(config, "game", "27015-27020",
                                                    "192.168.77.60", "both", "edge1").new_text
    assert fake.commands() == [f"apply --dry-run {proposed}",
                               f"apply --confirm 120 {proposed}", "confirm"]


@asynctest
async def test_the_form_shows_the_loader_s_message_and_applies_nothing(tmp_path):
    fake = FakeKeel()
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await open_tunnel(app, pilot, tunnel_screen(tmp_path, Collector(HUB_SNAPSHOT), fake))
        await pilot.press("f")
        await settle(pilot)
        form = app.screen
        await pilot.press(*"ssh2")
        form.query_one("#fwd-port").value = "22"
        form.query_one("#fwd-to").value = "192.168.77.5"
        form.query_one("#fwd-via").value = "edge1"
        await pilot.press("enter")
        await settle(pilot)
        assert app.screen is form
        assert "forward[1].port: tcp 22 is keel's own: SSH" in text_of(app)
        await pilot.press("escape")
        await settle(pilot)
        assert isinstance(app.screen, PeersScreen)
    assert fake.calls == [] and not (tmp_path / "proposed-forwards.toml").exists()


@asynctest
async def test_remove_the_one_under_the_cursor_after_a_yes(tmp_path):
    fake = FakeKeel()
    snapshot = ForwardsSnapshot(ROWS[:1], hub=True)
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = tunnel_screen(tmp_path, Collector(snapshot), fake)
        await open_tunnel(app, pilot, screen)
        await pilot.press("x")
        await settle(pilot)
        assert isinstance(app.screen, ConfirmScreen)
        assert "Remove the forward web?" in text_of(app)
        await pilot.press("n")
        await settle(pilot)
        assert app.screen is screen and fake.calls == []
        await pilot.press("x", "y")
        await settle(pilot)
        assert isinstance(app.screen, ReviewScreen)
        assert '-forward.name = "web"' in text_of(app)
        await pilot.press("escape")  # not applied
        await settle(pilot)
        assert app.screen is screen and "not applied" in text_of(app)
    assert fake.commands() == [f"apply --dry-run {tmp_path / 'proposed-forwards.toml'}"]


@asynctest
async def test_a_name_is_shown_escaped_never_as_markup(tmp_path):
    odd = ForwardsSnapshot((ForwardRow("[red]x[/red]\x1b[2J", "tcp", "8080", "192.168.77.50",
                                       "e\x07", "outer", 1, "answers"),), hub=True)
    app = make_app()
    async with app.run_test(size=(100, 24)) as pilot:
        await open_tunnel(app, pilot, tunnel_screen(tmp_path, Collector(odd)))
        text = text_of(app)
        assert "[red]x[/red]\\x1b[2J" in text and "e\\x07" in text


async def capture(size: tuple[int, int] = (80, 24)) -> list[str]:
    """The tunnel screen of a hub with three forwards, as text."""
    import tempfile

    with tempfile.TemporaryDirectory(prefix="keel-forwards-") as tmp:
        app = make_app()
        async with app.run_test(size=size) as pilot:
            await open_tunnel(app, pilot, tunnel_screen(Path(tmp), Collector(HUB_SNAPSHOT)))
            return screen_lines(app)


if __name__ == "__main__":
    print("\n".join(asyncio.run(capture())))
    sys.exit(0)


@asynctest
async def test_enter_on_the_last_field_submits_and_snat_is_typed(tmp_path):
    """Walked on the lab's console: the user tabs through every field and
    presses [enter] on the last (snat). It submits; "yes" asks for snat, and
    anything but yes or no is named."""
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = tunnel_screen(tmp_path, Collector(HUB_SNAPSHOT), FakeKeel())
        await open_tunnel(app, pilot, screen)
        await pilot.press("f")
        await settle(pilot)
        form = app.screen
        assert isinstance(form, ForwardFormScreen)
        for key, value in (("name", "game"), ("port", "27015"), ("to", "192.168.77.60"),
                           ("via", "edge1")):
            form.query_one(f"#fwd-{key}").value = value
        form.query_one("#fwd-snat").focus()
        form.query_one("#fwd-snat").value = "maybe"
        await pilot.press("enter")
        await settle(pilot)
        assert app.screen is form and "snat: yes or no" in text_of(app)
        form.query_one("#fwd-snat").value = "yes"
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, ReviewScreen)
        assert "+forward.snat = true" in text_of(app)
