"""The console's settings screens: every key of keel.toml on forms generated
from the one schema (keel.ui.settings_model), each value checked as it is
typed by the loader itself; a review of the change (the config diff and
`keel apply --dry-run`'s plan); apply with confirm and a visible countdown
(no answer: keel's own watcher rolls back); and the numbered revisions, to
roll back to one.

Every command goes through ConfigActions (`python -m keel.cli ...`), whose
`run` is injectable: the tests run no real system."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any, ClassVar

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen, Screen
from textual.widget import Widget
from textual.widgets import (
    DataTable,
    Input,
    Select,
    Static,
    Switch,
    TabbedContent,
    TabPane,
)

from keel.apply import rates
from keel.apply.rates import CONFIRM_SECONDS, KEEL, Run
from keel.config.dump import to_toml
from keel.config.errors import ConfigError
from keel.config.load import parse_config
from keel.config.schema import Config
from keel.state.revisions import Revision, RevisionStore
from keel.ui import settings_model as model
from keel.ui.screens import ConfirmScreen, MessageScreen
from keel.ui.widgets.footer import Footer
from keel.ui.widgets.lines import LinesPanel

PROPOSED = Path("/run/keel/proposed-settings.toml")
KEPT, ROLLED_BACK, NO_ANSWER, NOT_ROLLED_BACK = (
    "kept", "rolled back", "rolled back (no answer)", "not rolled back")


class ConfigActions:
    """keel's commands as the settings screens use them; each returns (ok,
    what keel said). `run` takes an argv and returns a CompletedProcess; by
    default keel.apply.rates' runner (the console's one starter of `keel
    apply`: this module starts no process of its own)."""

    def __init__(self, run: Run | None = None, proposed: Path = PROPOSED,
                 keel: tuple[str, ...] = KEEL) -> None:
        self.run: Run = run or rates._run
        self.proposed, self.keel = proposed, keel

    def _call(self, *args: str) -> tuple[bool, str]:
        try:
            proc = self.run([*self.keel, *args])
        except OSError as err:
            return False, f"cannot run keel: {err.strerror or err}"
        said = [s.strip() for s in (proc.stdout, proc.stderr) if s and s.strip()]
        return proc.returncode == 0, "\n".join(said) or f"exit {proc.returncode}"

    def propose(self, text: str) -> Path:
        """Write the proposed config where apply will read it (raises OSError)."""
        self.proposed.parent.mkdir(parents=True, exist_ok=True)
        self.proposed.write_text(text)
        return self.proposed

    def dry_run(self, path: Path) -> tuple[bool, str]:
        return self._call("apply", "--dry-run", str(path))

    def apply_confirm(self, path: Path, seconds: float) -> tuple[bool, str]:
        return self._call("apply", "--confirm", str(round(seconds)), str(path))

    def confirm(self) -> tuple[bool, str]:
        return self._call("confirm")

    def rollback(self, number: int | None = None) -> tuple[bool, str]:
        return self._call("rollback", *([] if number is None else [str(number)]))


def _last(text: str) -> str:
    lines = text.strip().splitlines()
    return lines[-1] if lines else ""


def _slug(path: str) -> str:
    return path.replace(".", "-")


def settings_screen(actions: ConfigActions | None = None,
                    revisions: RevisionStore | None = None) -> Screen:
    """The settings screen over the config in force, or a message saying why
    the config in force cannot be edited here (invalid: fix it in the file)."""
    from keel.model.reading import InvalidConfig, config_in_force, read_loaded

    source = config_in_force()
    try:
        config = read_loaded(source).config
    except InvalidConfig as err:
        return MessageScreen(f"{source} is invalid; fix it in the file first:\n{err}")
    except OSError as err:
        return MessageScreen(f"cannot read {source}: {err.strerror or err}")
    return SettingsScreen(config, actions, revisions, id="settings-screen")


# --- the forms ----------------------------------------------------------------

class SettingsScreen(Screen[None]):
    """One tab per section of the schema, one row per key: its name, its
    widget (Switch, Select, Input), its unit, its help; the loader's message
    under a value it refuses. [F5] reviews the change (nothing invalid)."""

    KEYS = "[F5] review  [F2][F3] section  [tab] next field  [esc] back"
    BINDINGS: ClassVar[list[Binding]] = [
        Binding("f5", "review", "review"),
        Binding("f2", "section(-1)", "previous section"),
        Binding("f3", "section(1)", "next section"),
        Binding("escape", "back", "back"),
        # the app's one-letter keys do nothing here (a Switch or a Select does
        # not take letters): no quitting or leaving the form by a stray key
        Binding("q,s,v,p,r,c,h,exclamation_mark", "nothing", show=False),
    ]
    CSS = """
    SettingsScreen TabbedContent { height: 1fr; }
    SettingsScreen ContentSwitcher { height: 1fr; }
    SettingsScreen TabPane { height: 1fr; padding: 0; }
    SettingsScreen Tabs { height: 1; }
    SettingsScreen Underline { display: none; }
    SettingsScreen Tab.-active { text-style: bold reverse; }
    SettingsScreen .fields { height: 1fr; scrollbar-size: 0 0; }
    SettingsScreen .section-doc { color: $text-muted; }
    SettingsScreen .field { height: auto; }
    SettingsScreen .row { height: auto; }
    SettingsScreen .key { width: 23; }
    SettingsScreen .unit { width: 8; padding-left: 1; }
    SettingsScreen .readonly { width: 1fr; }
    SettingsScreen Input { height: 1; width: 1fr; border: none; padding: 0; }
    SettingsScreen Input:focus { border: none; text-style: bold; }
    SettingsScreen Switch { height: 1; width: 6; border: none; padding: 0; }
    SettingsScreen Select { width: 1fr; }
    SettingsScreen SelectCurrent .arrow { display: none; }
    SettingsScreen SelectOverlay { scrollbar-size: 0 0; }
    SettingsScreen .invalid { color: $error; text-style: bold; }
    SettingsScreen .help { color: $text-muted; padding-left: 2; }
    SettingsScreen .error { color: $error; text-style: bold; padding-left: 2; display: none; }
    SettingsScreen .error.shown { display: block; }
    SettingsScreen #settings-problems { color: $error; height: auto; display: none; }
    SettingsScreen #settings-problems.shown { display: block; }
    """

    def __init__(self, config: Config | str, actions: ConfigActions | None = None,
                 revisions: RevisionStore | None = None,
                 confirm_s: float = CONFIRM_SECONDS, **kwargs: Any) -> None:
        """`config`: the config in force, or its TOML text (raises ConfigError
        when it is invalid)."""
        super().__init__(**kwargs)
        if isinstance(config, str):
            config = parse_config(config, "the config in force").config
        self.actions = actions or ConfigActions()
        self.revisions = revisions if revisions is not None else RevisionStore()
        self.confirm_s = confirm_s
        self.edits: dict[str, str | bool] = {}
        self.errors: dict[str, list[str]] = {}
        self.general: list[str] = []
        self._rebase(config)

    def _rebase(self, config: Config) -> None:
        self.config = config
        self.base_text = to_toml(config)
        self.base_dict = model.as_dict(config)
        self.fields = model.fields(config)
        self.by_path = {f.path: f for f in self.fields}
        self.by_id = {f"v-{_slug(f.path)}": f for f in self.fields if f.editable}

    # composing
    def compose(self) -> ComposeResult:
        with TabbedContent(id="sections"):
            for name, doc in model.sections():
                with TabPane(name, id=f"sec-{name}"):
                    scroll = VerticalScroll(classes="fields")
                    scroll.can_focus = False
                    with scroll:
                        yield Static(Text(doc), classes="section-doc")
                        for f in self.fields:
                            if f.section == name:
                                yield from self._row(f)
        yield Static("", id="settings-problems", markup=False)
        yield Footer(self.KEYS, id="footer")

    def _row(self, f: model.Field) -> ComposeResult:
        slug = _slug(f.path)
        with Vertical(classes="field", id=f"f-{slug}"):
            with Horizontal(classes="row"):
                yield Static(Text(f.key), classes="key")
                yield self._widget(f)
                unit = f.text if f.kind == "switch" and f.editable else f.unit
                yield Static(Text(unit), classes="unit", id=f"u-{slug}")
            help_ = f"{f.help}; {f.note}" if f.note else f.help
            yield Static(Text(help_), classes="help")
            yield Static("", classes="error", id=f"e-{slug}", markup=False)

    def _widget(self, f: model.Field) -> Widget:
        wid = f"v-{_slug(f.path)}"
        if not f.editable:
            return Static(Text(self._shown(f)), classes="readonly")
        if f.kind == "switch":
            return Switch(value=bool(f.value), id=wid)
        if f.kind == "select":
            return Select([(c, c) for c in f.choices], value=f.value, allow_blank=False,
                          compact=True, id=wid)
        return Input(value=f.text, compact=True, id=wid,
                     placeholder="(none)" if f.optional and f.default is None else "")

    @staticmethod
    def _shown(f: model.Field) -> str:
        if f.kind == "tables":
            return model.tables_text(f)
        return "(absent)" if f.value is None else f.text

    def on_mount(self) -> None:
        self._focus_section()

    # editing
    def on_input_changed(self, event: Input.Changed) -> None:
        self._edited(event.input.id, event.value)

    def on_switch_changed(self, event: Switch.Changed) -> None:
        field = self.by_id.get(event.switch.id or "")
        if field is not None:
            self.query_one(f"#u-{_slug(field.path)}", Static).update(
                Text(model.value_text(event.value)))
        self._edited(event.switch.id, event.value)

    def on_select_changed(self, event: Select.Changed) -> None:
        if event.value is not Select.BLANK:
            self._edited(event.select.id, str(event.value))

    def _edited(self, wid: str | None, value: str | bool) -> None:
        field = self.by_id.get(wid or "")
        if field is None:
            return
        same = value == field.value if isinstance(value, bool) else value == field.text
        if same:
            self.edits.pop(field.path, None)
        else:
            self.edits[field.path] = value
        self.recheck()

    def proposed_dict(self) -> dict[str, Any]:
        data = self.base_dict
        for path, value in self.edits.items():
            data = model.with_value(data, path, value)
        return data

    def recheck(self) -> None:
        """The loader's problems with the values as they are now, each under
        the key it names; the rest above the footer."""
        found, more = model.problems(self.proposed_dict())
        errors: dict[str, list[str]] = {}
        general = []
        for problem in found:
            owner = model.owner(problem.path, self.by_path)
            if owner is None:
                general.append(str(problem))
            else:
                errors.setdefault(owner, []).append(str(problem))
        if more:
            general.append(f"and {more} more problem{'' if more == 1 else 's'}")
        for path in set(errors) | set(self.errors):
            if errors.get(path) != self.errors.get(path):
                self._show_errors(path, errors.get(path, []))
        if general != self.general:
            box = self.query_one("#settings-problems", Static)
            box.update("\n".join(general))
            box.set_class(bool(general), "shown")
        self.errors, self.general = errors, general

    def _show_errors(self, path: str, lines: list[str]) -> None:
        slug = _slug(path)
        error = self.query_one(f"#e-{slug}", Static)
        error.update("\n".join(lines))
        error.set_class(bool(lines), "shown")
        for widget in self.query(f"#v-{slug}"):
            widget.set_class(bool(lines), "invalid")

    @property
    def invalid(self) -> bool:
        return bool(self.errors or self.general)

    # sections
    def _pane_ids(self) -> list[str]:
        return [f"sec-{name}" for name, _ in model.sections()]

    def action_section(self, step: int) -> None:
        tabs = self.query_one("#sections", TabbedContent)
        ids = self._pane_ids()
        i = ids.index(tabs.active) if tabs.active in ids else 0
        tabs.active = ids[(i + step) % len(ids)]
        self._focus_section()

    def _focus_section(self) -> None:
        tabs = self.query_one("#sections", TabbedContent)
        pane = self.query_one(f"#{tabs.active}", TabPane) if tabs.active else None
        if pane is None:
            return
        for widget in pane.query("Input, Switch, Select"):
            widget.focus()
            return

    def show_field(self, path: str) -> Widget:
        """Switch to the field's section and focus its widget."""
        field = self.by_path[path]
        self.query_one("#sections", TabbedContent).active = f"sec-{field.section}"
        widget = self.query_one(f"#v-{_slug(path)}")
        widget.focus()
        return widget

    def say(self, text: str) -> None:
        self.query_one(Footer).say(text)

    def action_nothing(self) -> None:
        self.say("[esc] leaves the settings")

    # review and apply
    def action_review(self) -> None:
        if self.invalid:
            count = sum(len(v) for v in self.errors.values()) + len(self.general)
            self.say(f"not reviewed: {count} problem{'' if count == 1 else 's'} "
                     "to fix first (shown under the keys)")
            if self.errors:
                self.show_field(next(p for p in self.by_path if p in self.errors))
            return
        try:
            text = model.proposed_text(self.proposed_dict())
        except ConfigError as err:  # recheck() has said it already
            self.say(f"not reviewed: {err.summary()}")
            return
        if text == self.base_text:
            self.say("nothing changed")
            return
        self.app.push_screen(ReviewScreen(self.base_text, text, self.actions, self.confirm_s,
                                          self.revisions.current_number(), id="review-screen"),
                             self._reviewed)

    def _reviewed(self, result: tuple[str, str] | None) -> None:
        if result is None:
            return
        outcome, said = result
        if outcome == KEPT:
            self._rebase(parse_config(self._kept_text, model.SOURCE).config)
            self.edits.clear()
        elif outcome in (ROLLED_BACK, NO_ANSWER):
            self._reset()
        self.recheck()
        self.say(said)

    @property
    def _kept_text(self) -> str:
        return model.proposed_text(self.proposed_dict())

    def _reset(self) -> None:
        """Every widget back to the config in force."""
        edited, self.edits = list(self.edits), {}
        for path in edited:
            field = self.by_path[path]
            widget = self.query_one(f"#v-{_slug(path)}")
            if isinstance(widget, Switch):
                widget.value = bool(field.value)
            elif isinstance(widget, Select):
                widget.value = field.value
            elif isinstance(widget, Input):
                widget.value = field.text

    def action_back(self) -> None:
        if not self.edits:
            self.app.pop_screen()
            return

        def answered(yes: bool | None) -> None:
            if yes:
                self.app.pop_screen()

        count = len(self.edits)
        self.app.push_screen(ConfirmScreen(
            f"Leave without applying? {count} changed value{'' if count == 1 else 's'} "
            "will be forgotten."), answered)


# --- the review ---------------------------------------------------------------

class ReviewScreen(Screen[tuple[str, str] | None]):
    """The diff of the config and `keel apply --dry-run`'s plan of the
    proposed file; [y] applies it with confirm. Dismisses with (outcome,
    what to say) once the countdown is answered, or None ([esc])."""

    BINDINGS: ClassVar[list[Binding]] = [
        Binding("y", "apply", "apply with confirm"),
        Binding("escape", "back", "back"),
    ]
    CSS = """
    ReviewScreen #review-body { height: 1fr; scrollbar-size: 0 0; }
    """

    def __init__(self, old_text: str, new_text: str, actions: ConfigActions,
                 confirm_s: float = CONFIRM_SECONDS, previous: int | None = None,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.old_text, self.new_text = old_text, new_text
        self.actions, self.confirm_s, self.previous = actions, confirm_s, previous
        self.state = "planning"  # -> ready | failed -> applying -> applied
        self.path: Path | None = None
        self.keys = (f"[y] apply with confirm ({round(confirm_s)} s to keep it)  "
                     "[up][down] scroll  [esc] back")

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="review-body"):
            yield LinesPanel(id="review-diff")
            yield LinesPanel(id="review-plan")
        yield Footer(self.keys, id="footer")

    def on_mount(self) -> None:
        changes = model.diff(self.old_text, self.new_text)
        lines = [Text(f"REVIEW  the config: {len(changes)} changed line"
                      f"{'' if len(changes) == 1 else 's'}", style="bold")]
        lines += [Text("  " + line, style="red" if line.startswith("-") else "green")
                  for line in changes]
        self.query_one("#review-diff", LinesPanel).set_lines(lines)
        self._plan_lines([Text("  running keel apply --dry-run ...", style="dim")])
        self.query_one("#review-body").focus()
        self._plan()

    def _plan_lines(self, lines: list[Text]) -> None:
        head = Text("PLAN  what changes on the system (keel apply --dry-run)", style="bold")
        self.query_one("#review-plan", LinesPanel).set_lines([Text(""), head, *lines])

    @work(thread=True, exclusive=True, group="review", exit_on_error=False)
    def _plan(self) -> None:
        try:
            path = self.actions.propose(self.new_text)
        except OSError as err:
            self.app.call_from_thread(self._planned, None, False,
                                      f"cannot write {self.actions.proposed}: "
                                      f"{err.strerror or err}")
            return
        ok, said = self.actions.dry_run(path)
        self.app.call_from_thread(self._planned, path, ok, said)

    def _planned(self, path: Path | None, ok: bool, said: str) -> None:
        if not self.is_attached:
            return
        self.path = path
        self.state = "ready" if ok else "failed"
        style = "" if ok else "bold red"
        lines = [Text("  " + line, style=style) for line in said.splitlines()]
        if not ok:
            lines.append(Text("  the dry run failed: nothing can be applied", style="bold"))
        self._plan_lines(lines)

    def action_apply(self) -> None:
        footer = self.query_one(Footer)
        if self.state == "planning":
            footer.say("wait for the plan (keel apply --dry-run)")
            return
        if self.state == "failed" or self.path is None:
            footer.say("not applied: the dry run failed")
            return
        if self.state != "ready":
            return
        self.state = "applying"
        footer.say(f"applying with confirm ({round(self.confirm_s)} s) ...", 600)
        self._apply(self.path)

    @work(thread=True, exclusive=True, group="review", exit_on_error=False)
    def _apply(self, path: Path) -> None:
        ok, said = self.actions.apply_confirm(path, self.confirm_s)
        self.app.call_from_thread(self._applied, ok, said)

    def _applied(self, ok: bool, said: str) -> None:
        if not self.is_attached:
            return
        if not ok:
            self.state = "ready"
            self.query_one(Footer).say(f"not applied: {_last(said)}", 30)
            return
        self.state = "applied"
        self.app.push_screen(CountdownScreen(self.actions, self.confirm_s, self.previous,
                                             said, id="countdown-screen"), self.dismiss)

    def action_back(self) -> None:
        if self.state in ("applying", "applied"):
            self.query_one(Footer).say("applying: answer the question first")
            return
        self.dismiss(None)


def countdown_bar(remaining: float, total: float, width: int = 40) -> str:
    fraction = max(0.0, min(1.0, remaining / total)) if total > 0 else 0.0
    done = round(fraction * width)
    return "[" + "#" * done + "-" * (width - done) + f"] {max(0, int(remaining + 0.999))} s"


class CountdownScreen(ModalScreen[tuple[str, str]]):
    """'Keep these settings?' with the time left. [y] keeps them (`keel
    confirm`), [n] rolls back at once; no answer: keel apply --confirm's own
    watcher rolls back, and the screen says so. Dismisses with (outcome, what
    to say) on [enter] once answered."""

    BINDINGS: ClassVar[list[Binding]] = [
        Binding("y", "keep", "keep"),
        Binding("n", "reject", "roll back"),
        Binding("enter,escape", "close", "close"),
    ]
    CSS = """
    CountdownScreen #countdown-title { text-style: bold; }
    """

    def __init__(self, actions: ConfigActions, seconds: float = CONFIRM_SECONDS,
                 previous: int | None = None, applied: str = "", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.actions, self.seconds, self.previous = actions, seconds, previous
        self.applied = applied
        self.state = "asking"  # -> answering -> done
        self.outcome: tuple[str, str] = (NO_ANSWER, "")
        self.deadline = 0.0
        self._timer: Any = None

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Static("KEEP THESE SETTINGS?", id="countdown-title", markup=False)
            yield Static(_last(self.applied) or "applied", id="countdown-applied",
                         markup=False)
            yield Static("", id="countdown-bar", markup=False)
            yield Static("", id="countdown-said", markup=False)
            yield Static("[y] keep  [n] roll back now", id="countdown-keys", markup=False)

    def on_mount(self) -> None:
        self.deadline = time.monotonic() + self.seconds
        self._timer = self.set_interval(0.25, self._tick)
        self._tick()

    def _back_to(self) -> str:
        return f"revision {self.previous}" if self.previous is not None else \
            "the revision before"

    def _tick(self) -> None:
        if self.state != "asking":
            return
        remaining = self.deadline - time.monotonic()
        self.query_one("#countdown-bar", Static).update(
            countdown_bar(remaining, self.seconds))
        if remaining > 0:
            self.query_one("#countdown-said", Static).update(
                f"no answer: rolls back to {self._back_to()} by itself")
            return
        self._done(NO_ANSWER, f"{NO_ANSWER}: keel put {self._back_to()} back")

    def _stop(self) -> None:
        if self._timer is not None:
            self._timer.stop()
            self._timer = None

    def _done(self, outcome: str, said: str) -> None:
        self._stop()
        self.state = "done"
        self.outcome = (outcome, said)
        self.query_one("#countdown-said", Static).update(said)
        self.query_one("#countdown-keys", Static).update("[enter] close")

    def action_keep(self) -> None:
        if self.state != "asking":
            return
        self.state = "answering"
        self._stop()
        self.query_one("#countdown-said", Static).update("keeping ...")
        self._keep()

    @work(thread=True, exclusive=True, group="countdown", exit_on_error=False)
    def _keep(self) -> None:
        ok, said = self.actions.confirm()
        if not ok:
            result = (NOT_ROLLED_BACK, f"keel confirm failed: {_last(said)}")
        elif "nothing to confirm" in said:
            result = (NO_ANSWER, "too late: keel had rolled back already")
        else:
            result = (KEPT, "kept: these settings stay")
        self.app.call_from_thread(self._done, *result)

    def action_reject(self) -> None:
        if self.state != "asking":
            return
        self.state = "answering"
        self._stop()
        self.query_one("#countdown-said", Static).update(f"rolling back to {self._back_to()}"
                                                         " ...")
        self._reject()

    @work(thread=True, exclusive=True, group="countdown", exit_on_error=False)
    def _reject(self) -> None:
        ok, said = self.actions.rollback(self.previous)
        if ok:
            self.actions.confirm()  # the rollback is done: stop the watcher's own
            result = (ROLLED_BACK, f"rolled back to {self._back_to()}")
        else:  # the watcher still rolls back at the deadline
            result = (NOT_ROLLED_BACK, f"rollback failed: {_last(said)} (keel still rolls "
                                       "back by itself when the time is up)")
        self.app.call_from_thread(self._done, *result)

    def action_close(self) -> None:
        if self.state == "done":
            self.dismiss(self.outcome)


# --- the revisions --------------------------------------------------------------

def _when(rev: Revision) -> str:
    if not rev.applied_at:
        return "?"
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(rev.applied_at))


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[:width - 3] + "..."


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
            table.add_row("*" if current else "", str(number), when, _cut(note, 20),
                          _cut(changed, 27), key=str(number))
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
        text = (f"rolled back to revision {number}: {_last(said)}" if ok else
                f"not rolled back to revision {number}: {_last(said)}")
        self.app.call_from_thread(self._rolled, text)

    def _rolled(self, text: str) -> None:
        if self.is_attached:
            self.say(text)
            self.reload()

    def action_back(self) -> None:
        self.app.pop_screen()
