"""The numbered revisions of the applied config ([h]): when, the note, the
keys that changed; [enter] rolls back to one, after a question."""

from __future__ import annotations

import time
from typing import Any, ClassVar

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import (
    DataTable,
    Static,
)

from keel.state.revisions import Revision, RevisionStore
from keel.ui import settings_model as model
from keel.ui.config_actions import ConfigActions
from keel.ui.dialogs import (
    ConfirmScreen,
)
from keel.ui.fmt import cut, last_line
from keel.ui.widgets.footer import Footer


def _when(rev: Revision) -> str:
    if not rev.applied_at:
        return "?"
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(rev.applied_at))


def revision_rows(store: RevisionStore) -> list[tuple[int, str, str, str, bool]]:
    """(number, when, note, keys changed from the revision before, in force?),
    newest first."""
    revs = store.list()
    current = store.current()
    rows = []
    before = ""
    for rev in revs:
        try:
            text = rev.text()
        except OSError:
            text = None
        if text is None:
            changed = "?"
        elif not before:
            changed = "(first)"
        else:
            changed = ", ".join(model.changed_keys(before, text)) or "(no key)"
        before = text or before
        rows.append((rev.number, _when(rev), rev.note, changed,
                     current is not None and rev.number == current.number))
    return rows[::-1]


class RevisionsScreen(Screen[None]):
    """The numbered revisions of the applied config (newest first, * in
    force): when, the note, the keys that changed. [enter] rolls back to
    the one under the cursor (`keel rollback N`), after a question."""

    KEYS = "[enter] roll back to this revision  [up][down] choose  [esc] back"
    BINDINGS: ClassVar[list[Binding]] = [Binding("escape", "back", "back")]
    CSS = """
    RevisionsScreen #revisions { height: 1fr; scrollbar-size: 0 0; }
    RevisionsScreen #revisions-title { text-style: bold; }
    """

    def __init__(self, store: RevisionStore | None = None,
                 actions: ConfigActions | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.store = store if store is not None else RevisionStore()
        self.actions = actions or ConfigActions()
        self.rows: dict[int, tuple[int, str, str, str, bool]] = {}

    def compose(self) -> ComposeResult:
        yield Static("REVISIONS  of the applied config, newest first (* in force)",
                     id="revisions-title", markup=False)
        yield DataTable(id="revisions", cursor_type="row", zebra_stripes=False)
        yield Footer(self.KEYS, id="footer")

    def on_mount(self) -> None:
        table = self.query_one("#revisions", DataTable)
        for label, width in (("", 1), ("#", 4), ("when", 16), ("note", 20), ("changed", 27)):
            table.add_column(label, width=width, key=label or "mark")
        table.focus()
        self.reload()

    def reload(self) -> None:
        self._load()

    @work(thread=True, exclusive=True, group="revisions", exit_on_error=False)
    def _load(self) -> None:
        try:
            rows = revision_rows(self.store)
        except OSError as err:
            self.app.call_from_thread(self.say, f"cannot read {self.store.root}: {err}")
            return
        self.app.call_from_thread(self._show, rows)

    def _show(self, rows: list[tuple[int, str, str, str, bool]]) -> None:
        if not self.is_attached:
            return
        table = self.query_one("#revisions", DataTable)
        table.clear()
        self.rows = {row[0]: row for row in rows}
        for number, when, note, changed, current in rows:
            table.add_row("*" if current else "", str(number), when, cut(note, 20),
                          cut(changed, 27), key=str(number))
        if not rows:
            self.say(f"no revisions yet in {self.store.root}")

    def say(self, text: str) -> None:
        self.query_one(Footer).say(text, 30)

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        number = int(event.row_key.value or 0)
        row = self.rows.get(number)
        if row is None:
            return
        if row[4]:
            self.say(f"revision {number} is the one in force")
            return

        def answered(yes: bool | None) -> None:
            if yes:
                self.say(f"rolling back to revision {number} ...")
                self._rollback(number)

        self.app.push_screen(ConfirmScreen(
            f"Roll back to revision {number} ({row[1]}, {row[2]})?\n"
            f"keel rollback {number} applies it again, as a new revision."), answered)

    @work(thread=True, exclusive=True, group="revisions-rollback", exit_on_error=False)
    def _rollback(self, number: int) -> None:
        ok, said = self.actions.rollback(number)
        text = (f"rolled back to revision {number}: {last_line(said)}" if ok else
                f"not rolled back to revision {number}: {last_line(said)}")
        self.app.call_from_thread(self._rolled, text)

    def _rolled(self, text: str) -> None:
        if self.is_attached:
            self.say(text)
            self.reload()

    def action_back(self) -> None:
        self.app.pop_screen()
