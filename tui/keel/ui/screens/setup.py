"""The first-boot setup wizard (keel.ui.setup_model renders here): the
role, the ports, the WAN, the LAN, the tunnel, shaping; each value checked as
it is typed by the loader itself; then the review (diff + `keel apply
--dry-run`) and apply with confirm the settings share (keel.ui.dialogs). Once kept: pairing
(keel pair) when chosen, then the throughput self-test when chosen.

The port step lists keel.system.nic_ports.read_ports() and reads it again
every POLL_S while shown (links and ports change under it); [f] and [g]
find the WAN's and the LAN's port by its cable (keel.ui.screens.cable).
The ports are chosen by what they are (keel.ui.setup_ports).

Keys only, 80x24, ASCII: [enter] takes a choice or a value and goes on,
[tab] moves between fields, [esc] goes back a step."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.message import Message
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import DataTable, Input, RadioButton, RadioSet, Static

from keel.apply.rates import CONFIRM_SECONDS
from keel.config.dump import to_toml
from keel.config.errors import ConfigError
from keel.config.schema import Config
from keel.parse.nic_first_seen import FirstSeen
from keel.parse.nic_identity import Port
from keel.state.revisions import RevisionStore
from keel.ui import settings_model, setup_ports
from keel.ui import setup_model as model
from keel.ui.config_actions import ConfigActions
from keel.ui.dialogs import KEPT, ConfirmScreen, MessageScreen, review_and_apply
from keel.ui.pair_hook import PairAfterSetup, pair_after_setup
from keel.ui.screens.cable import CableScreen
from keel.ui.screens.pairing import PairingScreen
from keel.ui.screens.selftest import start_selftest
from keel.ui.widgets.footer import Footer
from keel.ui.widgets.nic_table import NicTable

ReadPorts = Callable[[], Sequence[Port]]
POLL_S = 1.0  # the port step reads the ports' links this often


def read_ports() -> list[Port]:
    from keel.system.nic_ports import read_ports as read

    return read()


# --- widgets --------------------------------------------------------------------------

class Choice(RadioButton):
    """A radio button drawn "(*)" / "( )": ASCII, and on or off without colour."""

    @property
    def _button(self) -> Content:
        return Content("(*)" if self.value else "( )")


class ChoiceSet(RadioSet):
    """Up/down choose, [space] takes, [enter] takes and goes on."""

    BINDINGS: ClassVar[list[Binding]] = [Binding("enter", "take", "take and go on",
                                                 show=False)]

    class Taken(Message):
        def __init__(self, choice_set: ChoiceSet, key: str) -> None:
            super().__init__()
            self.choice_set, self.key = choice_set, key

    def __init__(self, name: str, options: dict[str, str], value: str, **kwargs: Any) -> None:
        # labels are plain text: "[a]" in one is a key to press, not markup
        super().__init__(*(Choice(Text(label), value=key == value, name=key)
                           for key, label in options.items()),
                         compact=True, **kwargs)
        self.keys = list(options)
        self.answer = name

    def on_mount(self) -> None:
        self.call_after_refresh(self._highlight_pressed)

    def _highlight_pressed(self) -> None:
        """The cursor starts on the choice in force (RadioSet starts on the
        first). Run after the first refresh, when keys typed ahead may have
        taken a choice and moved on: the set's choices are gone by then, and
        RadioSet's pressed_index raises for a pressed choice no longer in it."""
        pressed = self.pressed_button
        if pressed is not None and pressed in self.children:
            self._selected = self.children.index(pressed)

    def action_take(self) -> None:
        """The highlighted choice, taken (the Taken message carries it: the
        set's own Changed comes later)."""
        index = self._selected if self._selected is not None else self.pressed_index
        if index is None or index < 0:
            return
        if index != self.pressed_index:
            self.action_toggle_button()
        self.post_message(self.Taken(self, self.keys[index]))


# --- the wizard -----------------------------------------------------------------------

class SetupScreen(Screen[None]):
    """One step at a time; each answer checked by the loader as it changes,
    the message (key path: reason) under it; [enter] goes on only when the
    step's answers are valid. The last step reviews and applies through the
    settings' own (keel.ui.dialogs.review_and_apply)."""

    BINDINGS: ClassVar[list[Binding]] = [
        Binding("escape", "back", "back"),
        Binding("enter", "next", "next", show=False),  # where no field takes it
        # the app's one-letter keys do nothing here (no quitting by a stray
        # key on a choice or the NIC table)
        Binding("q,s,v,p,r,c,h,w,exclamation_mark", "nothing", show=False),
    ]
    CSS = """
    SetupScreen #setup-title { height: 1; text-style: bold; }
    SetupScreen #setup-body { height: 1fr; scrollbar-size: 0 0; }
    SetupScreen .step-doc { color: $text-muted; }
    SetupScreen .ask { height: auto; }
    SetupScreen .row { height: auto; }
    SetupScreen .label { width: 16; }
    SetupScreen .help { color: $text-muted; padding-left: 16; }
    SetupScreen .error { color: $error; text-style: bold; padding-left: 2; display: none; }
    SetupScreen .error.shown { display: block; }
    SetupScreen Input { height: 1; width: 1fr; border: none; padding: 0; }
    SetupScreen Input:focus { border: none; text-style: bold; }
    SetupScreen Input.invalid { color: $error; }
    SetupScreen ChoiceSet { border: none; padding: 0; height: auto; width: 1fr; }
    SetupScreen ChoiceSet:focus { border: none; }
    SetupScreen NicTable { height: auto; max-height: 8; scrollbar-size: 0 0; }
    SetupScreen #setup-problems { color: $error; height: auto; display: none; }
    SetupScreen #setup-problems.shown { display: block; }
    """
    KEYS = "[enter] next  [tab] next field  [esc] back"
    NIC_KEYS = "[w]/[l] WAN/LAN here  [f]/[g] find WAN/LAN by cable  [enter] next  [esc] back"
    LAST_KEYS = "[enter] review the change and apply it  [esc] back"

    def __init__(self, config: Config, ports: Sequence[Port] | None = None,
                 read: ReadPorts | None = None, actions: ConfigActions | None = None,
                 revisions: RevisionStore | None = None,
                 pair: PairAfterSetup | None = None, first_boot: bool = False,
                 confirm_s: float = CONFIRM_SECONDS, poll_s: float = POLL_S,
                 cable: Callable[[str, ReadPorts], CableScreen] | None = None,
                 first_seen: Mapping[str, FirstSeen] | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.config = config
        self.base_text = to_toml(config)
        self.base = settings_model.as_dict(config)
        self.read = read or read_ports
        self.poll_s = poll_s
        self.cable = cable or (lambda role, read: CableScreen(role, read, id="cable-screen"))
        self.ports: list[Port] = list(ports) if ports is not None else []
        self.ports_read = ports is not None
        self.actions = actions or ConfigActions()
        self.revisions = revisions if revisions is not None else RevisionStore()
        self.pair = pair or pair_after_setup
        self.first_boot, self.confirm_s = first_boot, confirm_s
        self.kept = model.kept_specs(config, first_boot)
        self.answers = model.from_config(config, ports, first_boot, first_seen)
        self.verdict = model.check(self.answers, self.base, self.known_ports, self.kept)
        self.step = "role"
        self.nic_error = ""
        self.blocked = False  # the footer says what keeps the step from going on

    # composing
    def compose(self) -> ComposeResult:
        yield Static("", id="setup-title", markup=False)
        body = VerticalScroll(id="setup-body")
        body.can_focus = False
        yield body
        yield Static("", id="setup-problems", markup=False)
        yield Footer(self.KEYS, id="footer")

    async def on_mount(self) -> None:
        if not self.ports_read:
            self._read_ports()
        self.set_interval(self.poll_s, self._poll)
        await self.show_step("role")

    def _poll(self) -> None:
        """The port step follows the links (and ports plugged in or out)."""
        if self.step == "nics" and self.app.screen is self:
            self._read_ports()

    @work(thread=True, exclusive=True, group="setup-ports", exit_on_error=False)
    def _read_ports(self) -> None:
        try:
            ports, error = list(self.read()), ""
        except OSError as err:
            ports, error = [], f"cannot list the ports: {err}"
        self.app.call_from_thread(self._ports_read, ports, error)

    async def _ports_read(self, ports: list[Port], error: str) -> None:
        first = not self.ports_read
        names = [p.name for p in self.ports]
        self.ports, self.ports_read, self.nic_error = ports, True, error
        if first:
            self.answers = model.default_nics(self.answers, ports, self.kept)
        self.recheck()
        if not self.is_attached or self.step != "nics":
            return
        table = self.query_one(NicTable)
        if first or [p.name for p in ports] != names:  # a port plugged in or out
            at = table.under_cursor
            await self.show_step("nics")
            if at is not None:
                self.query_one(NicTable).move_to(at)
            return
        for port in ports:
            table.update_cell(port.name, "link", port.link)
            table.update_cell(port.name, "use", model.nic_use(self.answers, port, ports))
        self.query_one("#nic-doc", Static).update(Text(self._nic_doc()))

    @property
    def known_ports(self) -> list[Port] | None:
        """The ports, once read (None before: nothing to judge the picks by)."""
        return self.ports if self.ports_read else None

    @property
    def steps(self) -> list[str]:
        return model.steps(self.answers)

    async def show_step(self, step: str, focus: str | None = None) -> None:
        """Draw a step (again: a choice can change what it asks)."""
        self.step = step
        body = self.query_one("#setup-body", VerticalScroll)
        await body.remove_children()
        await body.mount_all(list(self._widgets(step)))
        keys = self.NIC_KEYS if step == "nics" else self.LAST_KEYS if step == "done" else \
            self.KEYS
        footer = self.query_one(Footer)
        footer.keys = keys
        footer.update(Text(keys))
        self.recheck()
        target = None
        if focus:
            target = next(iter(self.query(f"#a-{focus}")), None)
        if target is None:
            target = next(iter(body.query("ChoiceSet, NicTable, Input")), None)
        if target is not None:
            target.focus()
        # the title last: once a step's title shows, its fields are there and
        # focused (a user, or the lab, types its keys as soon as it reads it)
        steps = self.steps
        number = steps.index(step) + 1
        title = f"SETUP  step {number}/{len(steps)}: {model.TITLES[step]}"
        if self.first_boot and step == "role":
            title += "  (first boot)"
        self.query_one("#setup-title", Static).update(title)

    def _widgets(self, step: str) -> list[Widget]:
        a = self.answers
        out: list[Widget] = []
        if step == "nics":
            out.append(Static(Text(self._nic_doc()), classes="step-doc", id="nic-doc"))
        note = setup_ports.role_note(self.ports) if self.ports_read else ""
        if step == "role" and note:
            out.append(Static(Text(note), classes="step-doc", id="role-note"))
        if step == "done":
            out.append(Static(Text("\n".join(model.summary(a, self.ports))),
                              id="setup-summary"))
            if a.role == "hub":
                out.append(Static(Text(model.HUB_NOTE), classes="step-doc"))
            out.append(Static(Text("[enter] shows the diff and what will change on the "
                                   "system; [y] there applies it with confirm"),
                              classes="step-doc"))
            return out
        for ask in model.asks(step, a):
            out.append(self._ask(ask))
            if ask.name == "tunnel" and a.tunnel == "pair":
                note = model.PAIRING_HUB if a.role == "hub" else model.PAIRING_EDGE
                out.append(Static(Text(note), classes="step-doc", id="pairing-note"))
            refusal = model.adaptive_refusal(a)
            if ask.name == "shaping" and refusal and model.has_tunnel(a):
                out.append(Static(Text(f"adaptive CAKE: not offered: {refusal}"),
                                  classes="step-doc", id="adaptive-note"))
        return out

    def _nic_doc(self) -> str:
        if not self.ports_read:
            return "reading the ports ..."
        if self.nic_error or not self.ports:
            return (self.nic_error or "no port found") + ": the list follows what is plugged in"
        if self.answers.role != "edge":
            return ("a hub uses one port, its WAN (towards the internet); the config names it "
                    "by what it is (its MAC), not by its name")
        return ("pick the WAN (towards the internet) and the LAN; the config names each by "
                "what it is (its MAC), not by its name")

    def _ask(self, ask: model.Ask) -> Widget:
        a = self.answers
        value = getattr(a, ask.name)
        wid = f"a-{ask.name}"
        parts: list[Widget] = []
        if ask.kind == "choice":
            parts.append(ChoiceSet(ask.name, model.choices(ask.name, a), value, id=wid))
        elif ask.kind == "nic":
            if ask.name == "lan_interface":  # one table picks both
                return Static("", classes="error", id=f"e-{ask.name}", markup=False)
            parts.append(self._nic_table())
        else:
            parts.append(Horizontal(Static(Text(ask.label), classes="label"),
                                    Input(value=value, compact=True, id=wid,
                                          placeholder="(none)",
                                          # the one-time code is typed, never shown
                                          password=ask.name == "pair_code"),
                                    classes="row"))
            if ask.help:
                parts.append(Static(Text(ask.help), classes="help"))
        parts.append(Static("", classes="error", id=f"e-{ask.name}", markup=False))
        return Vertical(*parts, classes="ask", id=f"q-{ask.name}")

    def _nic_table(self) -> NicTable:
        a = self.answers
        on_wan = setup_ports.port_named(a.wan_interface, self.ports)
        return NicTable(self.ports, lambda port: model.nic_use(a, port, self.ports),
                        on_wan.name if on_wan is not None else None, id="a-wan_interface")

    # answers
    def _set(self, name: str, value: str) -> bool:
        """Set an answer; whether the step must be drawn again (what it asks changed)."""
        before = [x.name for x in model.asks(self.step, self.answers)]
        choices_before = {x.name: model.choices(x.name, self.answers)
                          for x in model.asks(self.step, self.answers) if x.kind == "choice"}
        self.answers = model.set_answer(self.answers, name, value)
        if name == "role":  # an edge's LAN, where there is no choice to make
            self.answers = model.default_nics(self.answers, self.ports, self.kept)
        after = model.asks(self.step, self.answers)
        redraw = [x.name for x in after] != before or any(
            model.choices(x.name, self.answers) != choices_before.get(x.name)
            for x in after if x.kind == "choice") or name == "tunnel"
        self.recheck()
        return redraw

    def on_input_changed(self, event: Input.Changed) -> None:
        name = (event.input.id or "").removeprefix("a-")
        if name in model.BY_NAME and getattr(self.answers, name) != event.value:
            self._set(name, event.value)

    async def on_radio_set_changed(self, event: RadioSet.Changed) -> None:
        choice_set = event.radio_set
        if not isinstance(choice_set, ChoiceSet) or event.pressed.name is None:
            return
        if getattr(self.answers, choice_set.answer) == event.pressed.name:
            return
        if self._set(choice_set.answer, event.pressed.name):
            await self.show_step(self.step, focus=choice_set.answer)

    async def on_choice_set_taken(self, event: ChoiceSet.Taken) -> None:
        name = event.choice_set.answer
        if getattr(self.answers, name) != event.key and self._set(name, event.key):
            await self.show_step(self.step, focus=name)
        await self.next_from(name)

    async def on_nic_table_picked(self, event: NicTable.Picked) -> None:
        self.take_port(event.which, event.name)

    def take_port(self, which: str, name: str) -> bool:
        """The port `name` as the WAN or the LAN; whether it was taken."""
        if which == "lan" and self.answers.role != "edge":
            self.say("a hub uses one port, its WAN: no LAN")
            return False
        port = next((p for p in self.ports if p.name == name), None)
        if port is None:
            self.say(f"{name} is gone")
            return False
        self.answers = model.pick_nic(self.answers, which, port, self.ports)
        self.recheck()
        table = self.query_one(NicTable)
        for p in self.ports:
            table.update_cell(p.name, "use", model.nic_use(self.answers, p, self.ports))
        return True

    def on_nic_table_find(self, event: NicTable.Find) -> None:
        if event.which == "lan" and self.answers.role != "edge":
            self.say("a hub uses one port, its WAN: no LAN")
            return
        role = event.which.upper()

        def found(name: str | None) -> None:
            if name is not None and self.take_port(event.which, name):
                self.say(f"the {role} cable is in {name}: {name} is the {role}")
                self.query_one(NicTable).move_to(name)

        self.app.push_screen(self.cable(role, self.read), found)

    async def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        await self.next_step()

    async def on_input_submitted(self, event: Input.Submitted) -> None:
        await self.next_from((event.input.id or "").removeprefix("a-"))

    # checking
    def recheck(self) -> None:
        self.verdict = model.check(self.answers, self.base, self.known_ports, self.kept)
        if not self.is_attached:
            return
        for ask in model.asks(self.step, self.answers):
            lines = self.verdict.errors.get(ask.name, [])
            for error in self.query(f"#e-{ask.name}"):
                error.update("\n".join(lines))  # type: ignore[attr-defined]
                error.set_class(bool(lines), "shown")
            for widget in self.query(f"#a-{ask.name}"):
                widget.set_class(bool(lines), "invalid")
        general = self.verdict.general
        if self.step == "done":
            general = model.step_problems("done", self.answers, self.verdict)
        box = self.query_one("#setup-problems", Static)
        box.update("\n".join(general))
        box.set_class(bool(general), "shown")
        if self.blocked and not model.step_problems(self.step, self.answers, self.verdict):
            self.blocked = False  # fixed: the footer's "to fix first" goes
            footer = self.query_one(Footer)
            footer.update(Text(footer.keys))

    # moving
    async def next_from(self, name: str) -> None:
        """[enter] on an answer: the next answer of the step, or the next step."""
        names = [x.name for x in model.asks(self.step, self.answers)
                 if x.name != "lan_interface"]
        if name in names and names.index(name) + 1 < len(names):
            later = names[names.index(name) + 1]
            for widget in self.query(f"#a-{later}"):
                widget.focus()
                return
        await self.next_step()

    async def next_step(self) -> None:
        problems = model.step_problems(self.step, self.answers, self.verdict)
        if problems:
            self.blocked = True
            count = len(problems)
            self.say(f"{count} problem{'' if count == 1 else 's'} to fix first: {problems[0]}")
            first = next((x.name for x in model.asks(self.step, self.answers)
                          if x.name in self.verdict.errors), None)
            if first is not None:
                for widget in self.query(f"#a-{first}"):
                    widget.focus()
            return
        if self.step == "done":
            self.review()
            return
        steps = self.steps
        await self.show_step(steps[steps.index(self.step) + 1])

    async def action_next(self) -> None:
        await self.next_step()

    async def action_back(self) -> None:
        steps = self.steps
        if self.step in steps and steps.index(self.step) > 0:
            await self.show_step(steps[steps.index(self.step) - 1])
            return

        def answered(yes: bool | None) -> None:
            if yes:
                self.app.pop_screen()
                self.app.call_later(getattr(self.app, "say", lambda _t: None),
                                    "setup left: [w] on the dashboard opens it again")

        self.app.push_screen(ConfirmScreen(
            "Leave the setup? Nothing is applied: the config in force stays.\n"
            "[w] on the dashboard opens the setup again."), answered)

    def say(self, text: str) -> None:
        self.query_one(Footer).say(text, 15)

    def action_nothing(self) -> None:
        self.say("[esc] goes back a step")

    # review and apply: the settings' own (keel.ui.dialogs)
    def review(self) -> None:
        try:
            text = model.proposed_text(self.answers, self.base)
        except ConfigError as err:
            self.say(f"not reviewed: {err.summary()}")
            return
        review_and_apply(self.app, self.base_text, text, self.actions, self.revisions,
                         self.confirm_s, self._reviewed)

    def _reviewed(self, result: tuple[str, str] | None) -> None:
        if result is None:
            return
        outcome, said = result
        if outcome != KEPT:
            self.say(f"{said}: change what you like and apply again")
            return
        a = self.answers
        self.app.pop_screen()
        then_selftest = model.measures(a)
        adaptive = a.shaping == "adaptive"
        if a.tunnel == "pair":
            self.app.push_screen(PairingScreen(a.role, a.hub_address, a.pair_code, self.pair,
                                               then_selftest, adaptive, id="pairing-screen"))
        elif then_selftest:
            start_selftest(self.app, adaptive)
        else:
            self.app.call_later(getattr(self.app, "say", lambda _t: None),
                                f"setup {said}")


def setup_screen(first_boot: bool = False, **kwargs: Any) -> Screen:
    """The setup wizard over the config in force (the shipped default on
    first boot), or a message saying why it cannot start."""
    from keel.model.reading import InvalidConfig, config_in_force, read_loaded

    source = config_in_force()
    try:
        config = read_loaded(source).config
    except InvalidConfig as err:
        return MessageScreen(f"{source} is invalid; fix it in the file first:\n{err}")
    except OSError as err:
        return MessageScreen(f"cannot read {source}: {err.strerror or err}")
    from keel.system.nic_record import read_first_seen

    try:  # read here (sysfs: quick): the role step offers a one-port machine the hub
        ports: list[Port] | None = read_ports()
    except OSError:
        ports = None  # read again once shown, saying why not
    return SetupScreen(config, ports, first_boot=first_boot, first_seen=read_first_seen(),
                       id="setup-screen", **kwargs)
