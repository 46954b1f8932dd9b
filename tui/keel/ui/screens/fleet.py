"""The fleet on the hub's console ([l] from the peers screen): every edge as
`keel fleet` prints it (keel.fleet.hub.lines: handshake, latency now and over
the day, loss, CAKE, version and slot, the last upgrade, the verdict in
words, whether its routes are in sync), asked again every 30 s and on [r];
[s] gives every edge the routes to the others' LANs (`keel fleet sync`);
[u] asks for a bundle and starts a staged upgrade of the edges (`keel fleet
upgrade`, keel.fleet.rollout), whose progress per edge is drawn below the
edges while it runs, and its verdict after."""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Input, Static

from keel.fleet.hub import Synced
from keel.fleet.rollout import Rollout, RolloutError
from keel.shown import shown
from keel.ui.dialogs import ConfirmScreen
from keel.ui.widgets.bundle_input import target_input
from keel.ui.widgets.paste_input import GuardedPasteInput
from keel.upgrade.target import TargetError, check_target

REFRESH_S = 30.0
ROLLOUT_S = 2.0  # the rollout's state read this often (a file on /run)
Read = Callable[[], list[str]]  # the screen's lines, read now
Sync = Callable[[], list[Synced]]
ReadRollout = Callable[[], Rollout | None]
Order = Callable[[], str]  # the rollout's order in words, or RolloutError
Start = Callable[[str], None]  # start `keel fleet upgrade TARGET` (OSError)


def read_rollout() -> Rollout | None:
    from keel.fleet.rollout import read_state

    return read_state()


def rollout_order() -> str:
    from keel.fleet.rollout import order_in_force

    return order_in_force()


def start_rollout(target: str) -> None:
    from keel.fleet.background import start_rollout as start

    start(target)


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
    AUTO_FOCUS = ""  # none: the hidden Input would take every key
    BINDINGS: ClassVar[list[Binding]] = [
        Binding("r", "ask", "ask every edge again"),
        Binding("s", "sync", "give the edges their routes"),
        Binding("u", "upgrade", "upgrade the edges, one first"),
        Binding("escape", "back", "back"),
    ]

    def __init__(self, read: Read | None = None, sync: Sync | None = None,
                 rollout: ReadRollout | None = None, order: Order | None = None,
                 start: Start | None = None, **kwargs) -> None:
        """`read`, `sync`: the edges' lines and the routes' giving; `rollout`,
        `order`, `start`: the staged upgrade's state, order and start (tests
        give their own); the hub's config in force by default."""
        super().__init__(**kwargs)
        self.read, self.sync = read or read_fleet, sync or sync_fleet
        self.rollout, self.order = rollout or read_rollout, order or rollout_order
        self.start = start or start_rollout

    def compose(self) -> ComposeResult:
        yield Static("FLEET  every edge, asked through the tunnel", id="fleet-title",
                     markup=False)
        yield Static("asking the edges ...", id="fleet-edges", markup=False)
        yield Static("", id="fleet-rollout", markup=False)
        field = target_input("fleet-bundle", "the bundle for every edge (.raucb or https "
                                             "URL), [enter]")
        field.display = False
        yield field
        yield Static("", id="fleet-said", markup=False)
        yield Static("[r] ask again  [s] give the edges their routes  [u] upgrade the edges  "
                     "[esc] back", id="footer", markup=False)

    def on_mount(self) -> None:
        self.action_ask()
        self.set_interval(REFRESH_S, self.action_ask)
        self.show_rollout()
        self.set_interval(ROLLOUT_S, self.show_rollout)

    def show_rollout(self) -> None:
        state = self.rollout()
        self.query_one("#fleet-rollout", Static).update(
            "\n".join(["", *state.lines()]) if state is not None else "")

    def say(self, words: str) -> None:
        self.query_one("#fleet-said", Static).update(words)

    # --- [u]: a staged upgrade ----------------------------------------------------
    def action_upgrade(self) -> None:
        state = self.rollout()
        if state is not None and not state.ended:
            self.say("a rollout runs: its progress is above")
            return
        field = self.query_one("#fleet-bundle", Input)
        field.display = True
        field.focus()
        self.say("the bundle's path or https URL, [enter] ([esc] back)")

    def _hide_input(self) -> None:
        field = self.query_one("#fleet-bundle", Input)
        field.value = ""
        field.display = False
        self.set_focus(None)

    def on_guarded_paste_input_refused(self, event: GuardedPasteInput.Refused) -> None:
        self.say(event.why)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        try:
            target = check_target(event.value.strip())
            order = self.order()
        except (TargetError, RolloutError) as err:
            self.say(str(err))
            return
        self._hide_input()

        def answered(yes: bool | None) -> None:
            if not yes:
                self.say("no edge touched")
                return
            try:
                self.start(target)
            except OSError as err:
                self.say(f"the rollout did not start: {err.strerror or err}")
                return
            self.say("the rollout runs apart from the console (its log: "
                     "/run/keel/fleet-rollout.log); its progress is above")
            self.show_rollout()

        self.app.push_screen(ConfirmScreen(
            f"Upgrade the edges with {shown(target, 120)}?\n{order}. Each edge checks the "
            "bundle's signature with its own keys and keeps it only when its health gate "
            "says so; one that refuses it or rolls back stops the rollout there."), answered)

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
        field = self.query_one("#fleet-bundle", Input)
        if field.display:
            self._hide_input()
            self.say("")
            return
        self.app.pop_screen()
