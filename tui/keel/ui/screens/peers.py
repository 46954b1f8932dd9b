"""The tunnel's peers on the console: who they are, their tunnel address,
endpoint and last handshake (refreshed every 2 s), and pairing from here:
[n] on a hub shows a one-time code (in big digits, to read off this screen) and
waits for an edge; [j] on an edge asks the hub's address and the code (not
echoed). [d] unpairs the peer under the cursor after a yes. Under the peers,
the port forwards (keel.ui.screens.forwards): [f] adds one, [x] removes one."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import DataTable, Input, Static

from keel.apply.confirmed import KEEL, Run, _run, last_line
from keel.pair.peers import PeerRow, cells, read_peer_rows
from keel.ui.dialogs import ConfirmScreen
from keel.ui.pair_hook import PairAfterSetup, pair_after_setup
from keel.ui.screens.forwards import ForwardsPanel
from keel.ui.widgets.bigtext import big_text

CODE_LINE = re.compile(r"^\s+code\s+(\d{4}-\d{4})\s*$")
COLUMNS = ("name", "tunnel", "endpoint", "last handshake", "routes")


class PeersScreen(Screen):
    BINDINGS: ClassVar[list[Binding]] = [
        Binding("n", "pair_edge", "pair a new edge (hub)"),
        Binding("j", "join_hub", "join a hub (edge)"),
        Binding("d", "unpair", "unpair"),
        Binding("f", "add_forward", "add a port forward"),
        Binding("x", "remove_forward", "remove a port forward"),
        Binding("l", "fleet", "the fleet: every edge's health (hub)"),
        Binding("escape", "back", "back"),
    ]

    def __init__(self, read: Callable[[], tuple[list[PeerRow], str]] = read_peer_rows,
                 pair: PairAfterSetup = pair_after_setup, run: Run = _run,
                 forwards: ForwardsPanel | None = None, **kwargs) -> None:
        super().__init__(**kwargs)
        self.read, self.pair, self.run = read, pair, run
        self.forwards = forwards if forwards is not None else ForwardsPanel(id="forwards-panel")
        self.rows: list[PeerRow] = []
        self.pairing = False
        self.code_shown = ""

    def compose(self) -> ComposeResult:
        yield Static("PEERS  the tunnel's other ends", id="peers-title", markup=False)
        yield DataTable(id="peers", cursor_type="row", zebra_stripes=False)
        yield Static("", id="pair-code", markup=False)  # the code, big
        yield Input(placeholder="the hub's address (HUB or HUB:PORT), enter", id="hub-address")
        yield Input(placeholder="the code the hub shows, enter", password=True, id="hub-code")
        yield Static("", id="peers-said", markup=False)
        yield self.forwards
        yield Static("[n] pair (hub)  [j] join a hub (edge)  [d] unpair  [l] fleet  "
                     "[esc] back", id="footer", markup=False)

    def on_mount(self) -> None:
        table = self.query_one("#peers", DataTable)
        table.add_columns(*COLUMNS)
        for wid in ("#pair-code", "#hub-address", "#hub-code"):
            self.query_one(wid).display = False
        self.refresh_rows()
        self.set_interval(2.0, self.refresh_rows)

    # --- the table: read in a worker, drawn here ----------------------------------
    def refresh_rows(self) -> None:
        self.run_worker(self._read, thread=True, group="peers-read", exclusive=True,
                        description="read the peers")

    def _read(self) -> None:
        rows, why = self.read()
        self.app.call_from_thread(self.show_rows, rows, why)

    def show_rows(self, rows: list[PeerRow], why: str = "") -> None:
        self.rows = rows
        table = self.query_one("#peers", DataTable)
        keep = table.cursor_row
        table.clear()
        for r in rows:
            # Text, not str: DataTable takes a str as Rich markup; and escaped
            # (keel.shown): a name or an endpoint came from a peer
            table.add_row(*(Text(cell) for cell in cells(r)), key=r.name)
        if rows:
            table.move_cursor(row=min(keep, len(rows) - 1))
        if why:
            self.say(why)
        elif not rows and not self.pairing:
            self.say("no peers yet: [n] on the hub shows a code, [j] on the edge types it")

    def say(self, text: str) -> None:
        self.query_one("#peers-said", Static).update(text)

    # --- pairing ------------------------------------------------------------------
    def _progress(self, line: str) -> None:
        if m := CODE_LINE.match(line):
            # '#' glyphs on the console (its font lacks Digits' box pieces)
            console = getattr(getattr(self.app, "profile", None), "console", True)
            big = self.query_one("#pair-code", Static)
            big.update("\n".join(big_text(m.group(1), console)))
            big.display = True
            self.code_shown = m.group(1)
            return
        if line.strip():
            self.say(line)

    def _start(self, role: str, hub: str = "", code: str = "") -> None:
        if self.pairing:
            self.say("a pairing is already under way")
            return
        self.pairing = True

        def work() -> None:
            _, said = self.pair(role, hub, code,
                                 lambda line: self.app.call_from_thread(self._progress, line))
            self.app.call_from_thread(self._done, said)

        # the code never goes into a worker's description (it is shown when one fails)
        self.run_worker(work, thread=True, group="pairing", exclusive=True,
                        description=f"keel pair ({role})")

    def _done(self, said: str) -> None:
        self.pairing = False
        self.query_one("#pair-code", Static).display = False
        self.code_shown = ""
        self.say(said)
        self.refresh_rows()

    def action_fleet(self) -> None:
        from keel.ui.screens.fleet import FleetScreen

        self.app.push_screen(FleetScreen(id="fleet-screen"))

    def action_pair_edge(self) -> None:
        self.say("opening the pairing port ...")
        self._start("hub")

    def action_join_hub(self) -> None:
        address = self.query_one("#hub-address", Input)
        address.display = True
        address.focus()
        self.say("the hub's address, then the code its screen shows ([esc] back)")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        address, code = self.query_one("#hub-address", Input), self.query_one("#hub-code", Input)
        if event.input is address:
            if not address.value.strip():
                self.say("the hub's address: like 203.0.113.2")
                return
            code.display = True
            code.focus()
            return
        typed = code.value
        code.value = ""
        for widget in (address, code):
            widget.display = False
        self.say(f"pairing with the hub at {address.value.strip()} ...")
        self._start("edge", address.value.strip(), typed)

    # --- unpairing ----------------------------------------------------------------
    def action_unpair(self) -> None:
        table = self.query_one("#peers", DataTable)
        if not self.rows:
            self.say("no peer to unpair")
            return
        name = self.rows[min(table.cursor_row, len(self.rows) - 1)].name

        def answer(yes: bool | None) -> None:
            if yes:
                self.run_worker(lambda: self._unpair(name), thread=True, group="unpair",
                                description=f"keel peers remove {name}")

        self.app.push_screen(ConfirmScreen(f"Unpair {name}? Its tunnel ends and the route to "
                                           "its LAN goes."), answer)

    def _unpair(self, name: str) -> None:
        proc = self.run([*KEEL, "peers", "remove", name])
        said = f"unpaired {name}" if proc.returncode == 0 else f"not unpaired: {last_line(proc)}"
        self.app.call_from_thread(self.say, said)
        self.app.call_from_thread(self.refresh_rows)

    def action_add_forward(self) -> None:
        self.forwards.add()

    def action_remove_forward(self) -> None:
        self.forwards.remove_selected()

    def action_back(self) -> None:
        for wid in ("#hub-address", "#hub-code"):
            widget = self.query_one(wid, Input)
            if widget.display:
                widget.value = ""
                widget.display = False
                self.say("")
                return
        self.app.pop_screen()
