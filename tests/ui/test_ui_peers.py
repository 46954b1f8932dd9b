"""Pilot tests of the peers screen ([t]): the table, pairing from the UI on
both sides (the code shown big on the hub, typed unechoed on the edge and
kept out of every worker's description), unpairing after a yes."""

from __future__ import annotations

import subprocess
import threading

from keel.pair.peers import PeerRow
from keel.ui.screens.peers import PeersScreen
from tests.ui.uihelpers import asynctest, make_app, screen_lines, settle

ROWS = [PeerRow("edge-a", "10.77.0.2", "198.51.100.2:51820", 12.0, ("192.168.77.0/24",),
                "DGDJOoNeCQAxEAKW/6R/XQpwi4FNhdoJTo1LLorzzRg="),
        PeerRow("edge-b", "10.77.0.3", "-", None, ("192.168.78.0/24",),
                "sYboCPJPHlOu1tgN6jIPCqo/B9y+b7TT1bltyagEMGY=")]


class FakePair:
    def __init__(self) -> None:
        self.calls: list[tuple[str, str, str]] = []
        self.edge_came = threading.Event()
        self.edge_came.set()

    def __call__(self, role, hub, code, say):
        self.calls.append((role, hub, code))
        if role == "hub":
            say("keel pair: TCP 51820 open on eth0 for one edge, for at most 10 min")
            say("")
            say("    code   4821-0937")
            say("")
            say("on the edge: keel pair 203.0.113.2 4821-0937")
            self.edge_came.wait(10)
        return True, "paired: the tunnel is up and kept"


def peers_app(pair=None, run=None):
    app = make_app()
    workers: list[str] = []
    screen = PeersScreen(read=lambda: (list(ROWS), ""), pair=pair or FakePair(),
                         run=run or (lambda argv: subprocess.CompletedProcess(argv, 0, "", "")),
                         id="peers-screen")
    run_worker = screen.run_worker

    def recording(*args, **kwargs):
        worker = run_worker(*args, **kwargs)
        workers.append(worker.description)
        return worker

    screen.run_worker = recording  # type: ignore[method-assign]
    return app, screen, workers


@asynctest
async def test_t_opens_the_peers_with_their_handshakes():
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await pilot.press("t")
        await pilot.pause()
        assert isinstance(app.screen, PeersScreen)


@asynctest
async def test_the_table_and_a_hub_pairing_with_the_code_shown_big():
    pair = FakePair()
    pair.edge_came.clear()
    app, screen, _ = peers_app(pair)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        app.push_screen(screen)
        await settle(pilot)
        text = "\n".join(screen_lines(app))
        assert "edge-a" in text and "10.77.0.2" in text and "12 s ago" in text
        assert "edge-b" in text and "never" in text
        await pilot.press("n")
        big = screen.query_one("#pair-code")
        for _ in range(100):  # the worker waits for the edge: no settle() here
            await pilot.pause(0.02)
            if big.display:
                break
        assert big.display and screen.code_shown == "4821-0937"  # read off this screen
        text = "\n".join(screen_lines(app))
        assert "#   #" in text and text.isascii()  # drawn big, in '#', on the console
        assert "on the edge: keel pair 203.0.113.2" in "\n".join(screen_lines(app))
        pair.edge_came.set()
        await settle(pilot)
        assert not big.display
        assert pair.calls == [("hub", "", "")]
        assert "paired: the tunnel is up and kept" in "\n".join(screen_lines(app))


@asynctest
async def test_joining_a_hub_types_the_code_unechoed_and_keeps_it_out_of_workers():
    pair = FakePair()
    app, screen, workers = peers_app(pair)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        app.push_screen(screen)
        await settle(pilot)
        await pilot.press("j", *"203.0.113.2", "enter")
        await pilot.pause()
        await pilot.press(*"48210937")
        await pilot.pause()
        assert "48210937" not in "\n".join(screen_lines(app))  # not echoed
        await pilot.press("enter")
        await settle(pilot)
    assert pair.calls == [("edge", "203.0.113.2", "48210937")]
    assert workers and not any("4821" in (w or "") for w in workers), workers


@asynctest
async def test_unpair_asks_first_and_runs_keel_peers_remove():
    ran: list[list[str]] = []

    def run(argv):
        ran.append(argv)
        return subprocess.CompletedProcess(argv, 0, "", "")

    app, screen, _ = peers_app(run=run)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        app.push_screen(screen)
        await settle(pilot)
        await pilot.press("down", "d")
        await pilot.pause()
        assert "Unpair edge-b?" in "\n".join(screen_lines(app))
        await pilot.press("n")
        await settle(pilot)
        assert ran == []
        await pilot.press("d", "y")
        await settle(pilot)
    assert ran and ran[0][-3:] == ["peers", "remove", "edge-b"]


@asynctest
async def test_a_peer_s_name_and_endpoint_are_shown_escaped_never_as_markup():
    """A name or an endpoint came from a peer: control characters escaped,
    and a DataTable cell is Text (a str cell is taken as Rich markup)."""
    odd = [PeerRow("[red]evil[/red]\x1b[2J", "10.77.0.9", "198.51.100.9:1\x1b]0;x\x07",
                   None, ("[b]10.0.0.0/8",), "sYboCPJPHlOu1tgN6jIPCqo/B9y+b7TT1bltyagEMGY=")]
    app = make_app()
    screen = PeersScreen(read=lambda: (list(odd), ""), pair=FakePair(),
                         run=lambda argv: subprocess.CompletedProcess(argv, 0, "", ""))
    async with app.run_test(size=(160, 24)) as pilot:
        await app.push_screen(screen)
        await settle(pilot)
        text = "\n".join(screen_lines(app))
        assert "[red]evil[/red]\\x1b[2J" in text, text
        assert "198.51.100.9:1\\x1b]0;x\\x07" in text and "[b]10.0.0.0/8" in text
        assert "\x1b" not in text and "\x07" not in text
