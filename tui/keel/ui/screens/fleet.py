"""The fleet on the hub's console ([l] from the peers screen): every edge as
`keel fleet` prints it (keel.fleet.hub.lines: handshake, latency now and over
the day, loss, CAKE, version and slot, the last upgrade, the verdict in
words, whether its routes are in sync), asked again every 30 s and on [r];
[s] gives every edge the routes to the others' LANs (`keel fleet sync`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Static

from keel.fleet.hub import Synced

REFRESH_S = 30.0
Read = Callable[[], list[str]]  # the screen's lines, read now
Sync = Callable[[], list[Synced]]


def read_fleet() -> list[str]:
    """The edges asked now, as `keel fleet` prints them, and a problem's words."""
    from keel.fleet import hub

    rows, now, problem = hub.look()
    return hub.lines(rows, now) + ([problem] if problem else [])


def sync_fleet() -> list[Synced]:
    from keel.fleet import hub

    results, problem = hub.sync_in_force()
    if problem:  # said as the hub's own failure
        return [Synced("the hub", (), problem)]
    return results


def synced_words(results: list[Synced]) -> str:
    if not results:
        return "no edges to give routes to"
    failed = [r for r in results if r.error]
    if not failed:
        return f"every edge has its routes ({len(results)})"
    return "; ".join(f"{r.name}: {r.error}" for r in failed)


class FleetScreen(Screen):
    BINDINGS: ClassVar[list[Binding]] = [
        Binding("r", "ask", "ask every edge again"),
        Binding("s", "sync", "give the edges their routes"),
        Binding("escape", "back", "back"),
    ]

    def __init__(self, read: Read | None = None, sync: Sync | None = None, **kwargs) -> None:
        """`read`, `sync`: the edges' lines and the routes' giving (tests give
        their own); the hub's config in force by default."""
        super().__init__(**kwargs)
        self.read, self.sync = read or read_fleet, sync or sync_fleet

    def compose(self) -> ComposeResult:
        yield Static("FLEET  every edge, asked through the tunnel", id="fleet-title",
                     markup=False)
        yield Static("asking the edges ...", id="fleet-edges", markup=False)
        yield Static("", id="fleet-said", markup=False)
        yield Static("[r] ask again  [s] give the edges their routes  [esc] back",
                     id="footer", markup=False)

    def on_mount(self) -> None:
        self.action_ask()
        self.set_interval(REFRESH_S, self.action_ask)

    def action_ask(self) -> None:
        self.run_worker(self._ask, thread=True, group="fleet-ask", exclusive=True,
                        description="ask the edges")

    def _ask(self) -> None:
        lines = self.read()
        self.app.call_from_thread(self.show, lines)

    def show(self, lines: list[str]) -> None:
        self.query_one("#fleet-edges", Static).update("\n".join(lines))

    def action_sync(self) -> None:
        self.query_one("#fleet-said", Static).update("giving every edge its routes ...")
        self.run_worker(self._sync, thread=True, group="fleet-sync", exclusive=True,
                        description="give the edges their routes")

    def _sync(self) -> None:
        words = synced_words(self.sync())
        self.app.call_from_thread(self._synced, words)

    def _synced(self, words: str) -> None:
        self.query_one("#fleet-said", Static).update(words)
        self.action_ask()

    def action_back(self) -> None:
        self.app.pop_screen()
