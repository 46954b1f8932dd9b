"""keel pair after the setup wizard: the hub's code, or the edge reaching
the hub, each line as keel pair says it."""

from __future__ import annotations

from typing import Any, ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Static

from keel.ui.pair_hook import PairAfterSetup
from keel.ui.screens.selftest import start_selftest
from keel.ui.widgets.footer import Footer


class PairingScreen(Screen[None]):
    """keel pair after the setup: the hub's code, or the edge reaching the
    hub; each line as keel pair says it."""

    BINDINGS: ClassVar[list[Binding]] = [
        Binding("escape,enter", "close", "close"),
        Binding("q,s,v,p,r,c,h,w,exclamation_mark", "nothing", show=False)]
    CSS = """
    PairingScreen #pairing-lines { height: 1fr; }
    """

    def __init__(self, role: str, hub: str, code: str, pair: PairAfterSetup,
                 then_selftest: bool = False, adaptive: bool = False, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.role, self.hub, self.code, self.pair = role, hub, code, pair
        self.then_selftest, self.adaptive = then_selftest, adaptive
        self.lines: list[str] = []
        self.done = False
        self.paired = False

    def compose(self) -> ComposeResult:
        yield Static("PAIRING  keel pair, " + ("the hub: a code for the edge" if
                                              self.role == "hub" else f"with the hub at "
                                              f"{self.hub}"), id="setup-title", markup=False)
        yield Static("", id="pairing-lines", markup=False)
        yield Footer("pairing ...", id="footer")

    def on_mount(self) -> None:
        # the app's worker: leaving this screen does not stop a pairing
        self.app.run_worker(self._run, thread=True, group="pairing",
                            description="keel pair after the setup", exit_on_error=False)

    def _run(self) -> None:
        ok, said = self.pair(self.role, self.hub, self.code,
                             lambda line: self.app.call_from_thread(self.add, line))
        self.app.call_from_thread(self._finished, ok, said)

    def add(self, line: str) -> None:
        self.lines.append(line)
        if self.is_attached:
            self.query_one("#pairing-lines", Static).update("\n".join(self.lines[-18:]))

    def _finished(self, ok: bool, said: str) -> None:
        self.add(said)
        self.done, self.paired = True, ok
        if self.is_attached:
            then = "  then the throughput self-test" if ok and self.then_selftest else ""
            footer = self.query_one(Footer)
            footer.keys = f"[enter] close{then}"
            footer.update(Text(footer.keys))

    def action_close(self) -> None:
        if not self.done:
            self.query_one(Footer).say("pairing: it ends when the other router has paired "
                                       "or the code times out", 10)
            return
        self.app.pop_screen()
        if self.paired and self.then_selftest:
            start_selftest(self.app, self.adaptive)

    def action_nothing(self) -> None:
        pass
