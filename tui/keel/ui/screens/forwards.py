"""Port forwards on the tunnel screen ([t]): a FORWARDS table (name, proto,
public, target, via, hits, target status) shown when the config has forwards
or the router is a hub. The snapshot (keel.forwards.collect) is taken in a
worker thread every 30 s while the screen is in front, and posted whole;
the widgets only draw it. [f] adds a forward (a small form), [x] removes the
one under the cursor: both through keel.forwards.edit, as `keel forwards`
does (the loader's message under the form when it refuses), then the
settings' review and apply with confirm (keel.ui.dialogs.review_and_apply)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.screen import ModalScreen
from textual.widgets import DataTable, Input, Static

from keel.apply.rates import CONFIRM_SECONDS
from keel.config.schema import Config
from keel.forwards.cli import cells
from keel.forwards.collect import ForwardsSnapshot, collect_in_force
from keel.forwards.edit import PROTOCOLS, Change, ForwardEditError, add_forward, remove_forward
from keel.shown import shown
from keel.state.revisions import RevisionStore
from keel.ui.config_actions import ConfigActions
from keel.ui.dialogs import ConfirmScreen, review_and_apply

POLL_S = 30.0
PROPOSED = Path("/run/keel/proposed-forwards.toml")
COLUMNS = ("name", "proto", "public", "target", "via", "hits", "target status")
KEYS = "[f] add a forward  [x] remove the one under the cursor"
STATUS_STYLE = {"answers": "green", "refused": "bold red", "no answer": "bold yellow"}

Collect = Callable[[], ForwardsSnapshot]
ReadConfig = Callable[[], Config | str]  # the config in force, or why it cannot be read


def read_config_in_force() -> Config | str:
    from keel.apply.command import config_in_force
    from keel.model.reading import InvalidConfig, read_loaded

    try:
        return read_loaded(config_in_force()).config
    except InvalidConfig as err:
        return f"the config in force is invalid; fix it in the file first: {err.summary()}"


def row_cells(snapshot: ForwardsSnapshot) -> list[tuple[Text, ...]]:
    """Each forward's cells as the CLI escapes them (keel.forwards.cli.cells),
    without the role; the target status coloured."""
    out = []
    for row in snapshot.rows:
        name, proto, public, target, via, _role, hits, status = cells(row)
        out.append((Text(name), Text(proto), Text(public), Text(target), Text(via),
                    Text(hits), Text(status, style=STATUS_STYLE.get(row.status, ""))))
    return out


def note(snapshot: ForwardsSnapshot) -> str:
    if snapshot.problem:
        return snapshot.problem
    if not snapshot.rows:
        return f"no forwards yet.  {KEYS}"
    if snapshot.counters_note:
        return f"hits unknown: {snapshot.counters_note}.  {KEYS}"
    return KEYS


class ForwardsPanel(Vertical):
    """The FORWARDS title, table and a line under it. Hidden until a
    snapshot says there is something to show (forwards, or a hub)."""

    DEFAULT_CSS = """
    ForwardsPanel { height: auto; display: none; margin-top: 1; }
    ForwardsPanel.shown { display: block; }
    ForwardsPanel #forwards-title { text-style: bold; }
    ForwardsPanel #forwards { max-height: 10; }
    ForwardsPanel #forwards-note { color: $text-muted; }
    ForwardsPanel #forwards-said { text-style: bold; display: none; }
    ForwardsPanel #forwards-said.shown { display: block; }
    """

    class Polled(Message, bubble=False):
        """A snapshot, from the collecting thread to the panel."""

        def __init__(self, snapshot: ForwardsSnapshot) -> None:
            super().__init__()
            self.snapshot = snapshot

    def __init__(self, collect: Collect = collect_in_force,
                 read_config: ReadConfig = read_config_in_force,
                 actions: ConfigActions | None = None, revisions: RevisionStore | None = None,
                 every_s: float = POLL_S, confirm_s: float = CONFIRM_SECONDS,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.collect, self.read_config = collect, read_config
        self.actions = actions or ConfigActions(proposed=PROPOSED)
        self.revisions = revisions if revisions is not None else RevisionStore()
        self.every_s, self.confirm_s = every_s, confirm_s
        self.snapshot: ForwardsSnapshot | None = None
        self.busy = False  # a change under review: one at a time

    def compose(self) -> ComposeResult:
        yield Static("FORWARDS  public ports to targets (hits: connections let in)",
                     id="forwards-title", markup=False)
        yield DataTable(id="forwards", cursor_type="row", zebra_stripes=False)
        yield Static("", id="forwards-note", markup=False)
        yield Static("", id="forwards-said", markup=False)

    def on_mount(self) -> None:
        self.query_one("#forwards", DataTable).add_columns(*COLUMNS)
        self.poll()
        self.set_interval(self.every_s, self.tick)

    # --- the snapshot: taken in a thread, drawn here ---------------------------------
    def tick(self) -> None:
        if self.screen.is_active:  # in front: not under a form, a review, another screen
            self.poll()

    def poll(self) -> None:
        self.run_worker(self._collect, thread=True, group="forwards-collect", exclusive=True,
                        exit_on_error=False, description="collect the forwards")

    def _collect(self) -> None:
        try:
            snapshot = self.collect()
        except Exception as err:  # a bug must not end the console
            snapshot = ForwardsSnapshot(problem=f"forwards: cannot collect them "
                                                f"({type(err).__name__})")
        self.post_message(self.Polled(snapshot))

    def on_forwards_panel_polled(self, message: ForwardsPanel.Polled) -> None:
        self.show(message.snapshot)

    def show(self, snapshot: ForwardsSnapshot) -> None:
        self.snapshot = snapshot
        self.set_class(snapshot.shown, "shown")
        table = self.query_one("#forwards", DataTable)
        keep = table.cursor_row
        table.clear()
        for row, texts in zip(snapshot.rows, row_cells(snapshot), strict=True):
            table.add_row(*texts, key=row.name)
        if snapshot.rows:
            table.move_cursor(row=min(keep, len(snapshot.rows) - 1))
        self.query_one("#forwards-note", Static).update(note(snapshot))

    def say(self, text: str) -> None:
        """What the last change came to (or why it did not start), under the
        table until the next one."""
        said = self.query_one("#forwards-said", Static)
        said.update(text)
        said.set_class(bool(text), "shown")

    # --- changes: the form or the question, then review and apply with confirm ------
    def _config(self) -> Config | None:
        config = self.read_config()
        if isinstance(config, str):
            self.add_class("shown")
            self.say(config)
            return None
        return config

    def add(self) -> None:
        """[f]: the form; a change it makes goes to review."""
        if self.busy:
            return
        config = self._config()
        if config is not None:
            self.app.push_screen(ForwardFormScreen(config, id="forward-form"), self._review)

    def selected(self) -> str | None:
        rows = self.snapshot.rows if self.snapshot else ()
        if not rows:
            return None
        return rows[min(self.query_one("#forwards", DataTable).cursor_row, len(rows) - 1)].name

    def remove_selected(self) -> None:
        """[x]: the forward under the cursor, after a yes."""
        if self.busy:
            return
        name = self.selected()
        if name is None:
            self.add_class("shown")
            self.say("no forward to remove")
            return
        config = self._config()
        if config is None:
            return

        def answer(yes: bool | None) -> None:
            if not yes:
                return
            try:
                change = remove_forward(config, name)
            except ForwardEditError as err:
                self.say(f"not removed: {err.lines[0]}")
                return
            self._review(change)

        self.app.push_screen(ConfirmScreen(
            f"Remove the forward {shown(name, 64)}? Its public port closes once applied "
            "(and on the other end of the tunnel, remove it there too)."), answer)

    def _review(self, change: Change | None) -> None:
        if change is None:
            return
        self.busy = True
        self.say(change.said)
        review_and_apply(self.app, change.old_text, change.new_text, self.actions,
                         self.revisions, self.confirm_s, self._reviewed)

    def _reviewed(self, result: tuple[str, str] | None) -> None:
        self.busy = False
        self.say(result[1] if result else "not applied")
        self.poll()


class ForwardFormScreen(ModalScreen[Change | None]):
    """A new forward: name, protocol, public port(s), target, via, snat.
    [enter] checks it with the loader (its message under the fields) and
    dismisses with the change; [esc] with None."""

    BINDINGS: ClassVar[list[Binding]] = [Binding("escape", "cancel", "cancel")]
    FIELDS = (("name", "name", "like web"),
              ("protocol", "protocol", " or ".join(PROTOCOLS)),
              ("port", "public port", 'like 8080, or a range "8000-8010"'),
              ("to", "target", "A.B.C.D:PORT, or A.B.C.D for the same port(s)"),
              ("via", "via", "the edge it is behind (its peer name); empty: this LAN"))
    CSS = """
    ForwardFormScreen .row { height: 1; }
    ForwardFormScreen .label { width: 14; }
    ForwardFormScreen Input { height: 1; width: 1fr; border: none; padding: 0; }
    ForwardFormScreen Input:focus { border: none; text-style: bold; }
    ForwardFormScreen #form-title { text-style: bold; }
    ForwardFormScreen #form-problems { color: $error; text-style: bold; height: auto; }
    """

    def __init__(self, config: Config, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.config = config

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Static("ADD A FORWARD", id="form-title", markup=False)
            for key, label, hint in self.FIELDS:
                with Horizontal(classes="row"):
                    yield Static(label, classes="label", markup=False)
                    yield Input(value="tcp" if key == "protocol" else "", placeholder=hint,
                                id=f"fwd-{key}")
            with Horizontal(classes="row"):
                # a text field like the others: [enter] submits from any of them,
                # and it reads the same on the console's 16 colours
                yield Static("snat", classes="label", markup=False)
                yield Input(value="no", placeholder="yes: the target sees the hub's tunnel "
                                                    "address", id="fwd-snat")
            yield Static("", id="form-problems", markup=False)
            yield Static("[enter] check, then review  [tab] next field  [esc] cancel",
                         id="form-keys", markup=False)

    def on_mount(self) -> None:
        self.query_one("#fwd-name", Input).focus()

    def value(self, key: str) -> str:
        return self.query_one(f"#fwd-{key}", Input).value

    def change(self) -> Change:
        """The forward as typed, checked (raises ForwardEditError)."""
        snat = self.value("snat").strip().lower()
        if snat not in ("yes", "no", ""):
            raise ForwardEditError(["snat: yes or no"])
        return add_forward(self.config, self.value("name"), self.value("port"),
                           self.value("to"), self.value("protocol").strip().lower(),
                           self.value("via"), snat == "yes")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        try:
            change = self.change()
        except ForwardEditError as err:
            self.query_one("#form-problems", Static).update("\n".join(err.lines[:4]))
            return
        self.dismiss(change)

    def action_cancel(self) -> None:
        self.dismiss(None)
