"""Find a port by its cable (the setup wizard's [f] for the WAN, [g] for the
LAN): "unplug all cables, then plug the WAN cable in now", the ports' links
read every POLL_S (keel.system.nic_ports.read_ports) and judged by
keel.ui.cable_watch. Dismisses with the port found, or None once the user
leaves; when none or more than one came up it says so and [enter] watches
again."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import ClassVar

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Static

from keel.parse.nic_identity import Port
from keel.ui import cable_watch as watch
from keel.ui.fmt import cut

ReadPorts = Callable[[], Sequence[Port]]


class CableScreen(ModalScreen[str | None]):
    BINDINGS: ClassVar[list[Binding]] = [
        Binding("escape", "leave", "back"),
        Binding("enter", "again", "watch again", show=False)]
    CSS = """
    CableScreen #cable-message { text-style: bold; }
    CableScreen #cable-ports { color: $text-muted; }
    """

    def __init__(self, role: str, read: ReadPorts, poll_s: float = watch.POLL_S,
                 timeout_s: float = watch.TIMEOUT_S, settle_s: float = watch.SETTLE_S,
                 clock: Callable[[], float] = time.monotonic, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.role, self.read = role, read
        self.poll_s, self.timeout_s, self.settle_s = poll_s, timeout_s, settle_s
        self.clock = clock
        self.snaps: list[watch.Snapshot] = []
        self.started = 0.0
        self.watching = False
        self.verdict: watch.Verdict | None = None

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Static(Text(f"FIND THE {self.role} BY ITS CABLE"), id="cable-title")
            yield Static(Text(f"unplug all cables, then plug the {self.role} cable in now"),
                         id="cable-message")
            yield Static("", id="cable-ports", markup=False)
            yield Static(Text("[esc] back"), id="cable-keys")

    def on_mount(self) -> None:
        self.set_interval(self.poll_s, self._poll)
        self.start()

    def start(self) -> None:
        self.snaps, self.started, self.watching, self.verdict = [], self.clock(), True, None
        self.query_one("#cable-keys", Static).update(Text("[esc] back"))
        self._poll()

    def _poll(self) -> None:
        if self.watching:
            self._read()

    @work(thread=True, exclusive=True, group="cable-read", exit_on_error=False)
    def _read(self) -> None:
        try:
            ports, error = list(self.read()), ""
        except OSError as err:
            ports, error = [], f"cannot list the ports: {err}"
        self.app.call_from_thread(self._got, ports, error, self.clock())

    def _got(self, ports: list[Port], error: str, at: float) -> None:
        if not self.watching or not self.is_attached:
            return
        self.snaps = [*self.snaps, watch.snapshot(at, ports)][-watch.SNAPSHOTS_MAX:]
        self.verdict = watch.judge(self.snaps, self.started, self.role, self.timeout_s,
                                   self.settle_s)
        self.query_one("#cable-ports", Static).update(self._port_lines(ports, error))
        if self.verdict.done and self.verdict.port is not None:
            self.watching = False
            self.dismiss(self.verdict.port)
            return
        self.query_one("#cable-message", Static).update(Text(self.verdict.message))
        if self.verdict.done:
            self.watching = False
            self.query_one("#cable-keys", Static).update(Text("[enter] watch again  [esc] back"))

    def _port_lines(self, ports: Sequence[Port], error: str) -> str:
        lines = [error] if error else []
        lines += [f"{cut(p.name, 12):<13}{cut(p.driver or '-', 12):<13}{p.link}" for p in ports]
        if any(p.up is False for p in ports):
            lines.append("a port shown down is not set up: its link cannot be seen")
        return "\n".join(lines) or "no port found"

    def action_again(self) -> None:
        if not self.watching:
            self.start()

    def action_leave(self) -> None:
        self.watching = False
        self.dismiss(None)
