"""Find a port by its cable (the setup wizard's [f] for the WAN, [g] for the
LAN): "unplug all cables, then plug the WAN cable in now", the ports' links
read every POLL_S (keel.system.nic_ports.read_ports) and judged by
keel.ui.cable_watch. Dismisses with the port found, or None once the user
leaves; when none or more than one came up it says so and [enter] watches
again.

A port keel has not set up (no role in the config in force) has no carrier
to read: the watch sets such ports up first (keel.system.nic_link, no
address), waits WARM_S for their links to settle before it starts, and sets
them down again when it ends."""

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
SetLink = Callable[[str, bool], bool]
WARM_S = 5.0  # after setting ports up: their links negotiate before the watch starts


def set_link(name: str, up: bool) -> bool:
    from keel.system.nic_link import set_up

    return set_up(name, up)


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
                 clock: Callable[[], float] = time.monotonic, link: SetLink = set_link,
                 warm_s: float = WARM_S, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.role, self.read, self.link, self.warm_s = role, read, link, warm_s
        self.raised: list[str] = []  # the ports this watch set up (down again after)
        self.raise_asked = False
        self.warm_until: float | None = None
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
        raised: list[str] = []
        try:
            ports, error = list(self.read()), ""
            if not self.raise_asked:  # once: the ports keel has not set up
                self.raise_asked = True
                raised = [p.name for p in ports if p.up is False and self.link(p.name, True)]
                if raised:
                    ports = list(self.read())
        except OSError as err:
            ports, error = [], f"cannot list the ports: {err}"
        self.app.call_from_thread(self._got, ports, error, self.clock(), raised)

    def _got(self, ports: list[Port], error: str, at: float,
             raised: Sequence[str] = ()) -> None:
        if raised:
            self.raised += raised
            self.warm_until = at + self.warm_s
        if not self.watching or not self.is_attached:
            return
        if self.warm_until is not None and at < self.warm_until:
            self.started = self.warm_until  # the timeout counts from the watch's start
            self.query_one("#cable-message", Static).update(Text(
                f"setting up {', '.join(self.raised)} to see their links ..."))
            self.query_one("#cable-ports", Static).update(self._port_lines(ports, error))
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
            lines.append("a port shown down could not be set up: its link cannot be seen")
        return "\n".join(lines) or "no port found"

    def action_again(self) -> None:
        if not self.watching:
            self.start()

    def action_leave(self) -> None:
        self.watching = False
        self.dismiss(None)

    def on_unmount(self) -> None:
        """The ports this watch set up, down again (as keel left them)."""
        for name in self.raised:
            self.link(name, False)
        self.raised = []
