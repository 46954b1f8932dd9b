"""The console's settings screens: every key of keel.toml on forms generated
from the one schema (keel.ui.settings_model), each value checked as it is
typed by the loader itself; [F5] reviews the change and applies it with
confirm (keel.ui.dialogs.review_and_apply). The numbered revisions, to roll
back to one: keel.ui.screens.revisions.

Every command goes through keel.ui.config_actions.ConfigActions, whose
`run` is injectable: the tests run no real system."""

from __future__ import annotations

from typing import Any, ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import (
    Input,
    Select,
    Static,
    Switch,
    TabbedContent,
    TabPane,
)

from keel.apply.rates import CONFIRM_SECONDS
from keel.config.dump import to_toml
from keel.config.errors import ConfigError
from keel.config.load import parse_config
from keel.config.schema import Config
from keel.state.revisions import RevisionStore
from keel.ui import settings_model as model
from keel.ui.config_actions import ConfigActions
from keel.ui.dialogs import (
    KEPT,
    NO_ANSWER,
    ROLLED_BACK,
    ConfirmScreen,
    MessageScreen,
    review_and_apply,
)
from keel.ui.widgets.footer import Footer


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
        review_and_apply(self.app, self.base_text, text, self.actions, self.revisions,
                         self.confirm_s, self._reviewed)

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
