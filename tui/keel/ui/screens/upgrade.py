"""The upgrade screen ([u] on the dashboard): keel's two slots (version,
state, which one booted, which one boots next), the trial waiting for its
first healthy boot and how the last upgrade ended; [i] installs a signed
bundle from a path or an https URL into the slot not running (an older keel
only when the user says yes to "install an older keel?"), [b] boots
the other slot again. Either ends in a reboot countdown ([enter] now, any
other key cancels).

The steps are keel.upgrade's own (keel.upgrade.flow, what `keel upgrade`
runs), on worker threads: reading the slots starts `rauc status`, an install
takes minutes. The screen only draws what they post. Every step is
injectable (UpgradeScreen's arguments); by default the real ones."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

from rich.text import Text
from textual import events, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.message import Message
from textual.screen import ModalScreen, Screen
from textual.widgets import Input, Static

from keel.shown import shown
from keel.ui.dialogs import ConfirmScreen
from keel.ui.fmt import countdown_bar, progress_bar
from keel.ui.widgets.bundle_input import target_input
from keel.ui.widgets.footer import Footer
from keel.ui.widgets.frame import Frame, frame
from keel.ui.widgets.lines import LinesPanel
from keel.ui.widgets.paste_input import GuardedPasteInput
from keel.upgrade import flow, system
from keel.upgrade.record import Pending
from keel.upgrade.slots import SlotView, UpgradeStatus
from keel.upgrade.target import TargetError, check_target

ReadStatus = Callable[[], UpgradeStatus]
Install = Callable[[str, flow.Progress, flow.Say, flow.Ask], Pending]
RollBack = Callable[[], SlotView]
Reboot = Callable[[], None]

REBOOT_S = 10.0
STATE_STYLE = {"good": "green", "trying": "yellow", "new": "cyan", "bad": "bold red",
               "empty": "dim"}


# --- the real steps (keel.upgrade, looked up when called) -------------------------

def read_status() -> UpgradeStatus:
    return system.read_status()


def install_bundle(target: str, progress: flow.Progress, say: flow.Say,
                   ask: flow.Ask) -> Pending:
    return flow.install_bundle(target, progress, say, allow_downgrade=ask)


def roll_back() -> SlotView:
    return flow.roll_back()


def reboot() -> None:
    from keel.system.console import reboot as reboot_now

    reboot_now()


# --- what the workers post ---------------------------------------------------------

@dataclass(frozen=True)
class StatusView:
    """One read of the slots: the status, or why there is none."""

    status: UpgradeStatus | None
    error: str = ""


class StatusRead(Message, bubble=False):
    def __init__(self, view: StatusView) -> None:
        super().__init__()
        self.view = view


class InstallProgress(Message, bubble=False):
    """A step of the install: RAUC's percent (None: a step of keel's own)."""

    def __init__(self, percent: int | None, what: str) -> None:
        super().__init__()
        self.percent, self.what = percent, what


class AskDowngrade(Message, bubble=False):
    """The install's worker asks (install an older keel?) and waits for
    `answer` to be set: True to go on."""

    def __init__(self, question: str) -> None:
        super().__init__()
        self.question = question
        self.answered = threading.Event()
        self.answer = False


class StepDone(Message, bubble=False):
    """An install or a rollback ended: what boots next, or why it did not."""

    def __init__(self, kind: str, next_boot: str, error: str = "") -> None:
        super().__init__()
        self.kind, self.next_boot, self.error = kind, next_boot, error


def one_line(text: str, width: int = 78) -> str:
    """Text from outside on one line: every control character escaped
    (keel.shown), cut with "..." to `width`. A backslash stays single: keel's
    own messages carry the escapes shown() made of what they quote."""
    safe = shown(" ".join(str(text).split())).replace("\\\\", "\\")
    return safe if len(safe) <= width else safe[:max(0, width - 3)] + "..."


def reason(err: BaseException) -> str:
    """An error as its one line: keel's refusals as they are, others named."""
    if isinstance(err, (system.UpgradeError, TargetError)):
        return str(err)
    if isinstance(err, OSError):
        return f"{err.filename or 'error'}: {err.strerror or err}"
    return f"{type(err).__name__}: {err}"


# --- drawing (pure: a StatusView in, lines out) -------------------------------------

def slot_line(slot: SlotView) -> Text:
    marks = ", ".join(m for m, on in (("booted", slot.booted), ("next boot", slot.next_boot))
                      if on)
    line = Text(f"  slot {slot.name}  {one_line(slot.version or '-', 24):<24} ")
    line.append(f"{slot.state:<7}", style=STATE_STYLE.get(slot.state, ""))
    line.append(f" {marks}".rstrip())
    return line


def row(label: str, text: str, width: int, style: str = "") -> Text:
    """A labelled line: the label, then text from outside on what is left."""
    head = f"  {label:<7} "
    return Text(head + one_line(text, width - len(head)), style=style)


def status_lines(view: StatusView | None, width: int = 78) -> list[Text]:
    if view is None:
        return [Text("  reading the slots ...", style="dim")]
    if view.status is None:
        return [row("error", f"cannot read the slots: {view.error}", width, "bold red")]
    st = view.status
    lines = [slot_line(slot) for slot in st.slots]
    if st.installing is not None:
        lines.append(row("install", f"keel {st.installing.to_version} is being written into "
                                    f"slot {st.installing.to_slot}", width, "yellow"))
    if st.booted is None:
        lines.append(row("booted", "? (no rauc.slot= at boot: not an A/B boot)", width,
                         "yellow"))
    if st.pending is not None:
        p = st.pending
        lines.append(row("trial", f"keel {p.to_version} in slot {p.to_slot}, kept after its "
                                  "first healthy boot", width))
    else:
        lines.append(row("trial", "none", width, "dim"))
    if st.last is not None:
        lines.append(row("last", st.last.line(), width,
                         "bold red" if st.last.install_broke else ""))
    else:
        lines.append(row("last", "no upgrade yet", width, "dim"))
    if st.problem:
        lines.append(row("note", st.problem, width, "yellow"))
    return lines


def progress_lines(what: str, percent: int | None, width: int = 78) -> list[Text]:
    bar = Text("  " + progress_bar(percent / 100, 40)) if percent is not None else Text("")
    return [Text("  " + one_line(what, width - 2)), bar]


# --- the screens --------------------------------------------------------------------

class UpgradeScreen(Screen[None]):
    """The slots; [i] install, [b] boot the other slot again, [esc] back."""

    AUTO_FOCUS = ""  # none: the hidden Input would take every key
    KEYS = "[i] install a bundle  [b] boot the other slot again  [r] read again  [esc] back"
    BINDINGS: ClassVar[list[Binding]] = [
        Binding("i", "install", "install a bundle"),
        Binding("b", "rollback", "boot the other slot again"),
        Binding("escape", "back", "back"),
    ]
    DEFAULT_CSS = """
    UpgradeScreen #upgrade-title { height: 1; text-style: bold; }
    UpgradeScreen #upgrade-target { display: none; }
    UpgradeScreen #upgrade-said { height: 1; }
    """

    def __init__(self, read: ReadStatus = read_status, install: Install = install_bundle,
                 rollback: RollBack = roll_back, reboot: Reboot = reboot,
                 reboot_s: float = REBOOT_S, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.read, self.install, self.rollback = read, install, rollback
        self.reboot, self.reboot_s = reboot, reboot_s
        self.view: StatusView | None = None
        self.percent = 0  # of the install under way
        # idle -> installing | rolling back -> countdown -> rebooting | idle
        self.state = "idle"

    @property
    def ascii_console(self) -> bool:
        """ASCII borders: the app's profile is the console's (or there is none)."""
        return getattr(getattr(self.app, "profile", None), "console", True)

    @property
    def line_width(self) -> int:
        return max(20, (self.size.width or 80) - 2)

    def compose(self) -> ComposeResult:
        yield Static("UPGRADE  two slots: a new keel is kept only after a healthy boot",
                     id="upgrade-title", markup=False)
        console = self.ascii_console
        yield frame(LinesPanel(id="upgrade-slots"), "SLOTS", console=console)
        with Frame("INSTALL", console=console, id="upgrade-install"):
            yield target_input("upgrade-target")
            yield LinesPanel(id="upgrade-progress")
        yield LinesPanel(id="upgrade-said")
        yield Footer(self.KEYS, id="footer")

    def on_mount(self) -> None:
        self.show_status()
        self.set_progress("[i] installs a signed bundle into the slot not running", None)
        self.poll_all()

    # --- the slots: read on a worker thread, drawn here ------------------------------
    def poll_all(self) -> None:
        """Read the slots again (on mount, [r], after an install or a rollback)."""
        self._read()

    @work(thread=True, exclusive=True, group="upgrade-read", exit_on_error=False,
          description="read the slots")
    def _read(self) -> None:
        try:
            view = StatusView(self.read())
        except Exception as err:  # the reader's failure is drawn, not a crash
            view = StatusView(None, reason(err))
        self.post_message(StatusRead(view))

    def on_status_read(self, message: StatusRead) -> None:
        self.view = message.view
        self.show_status()

    def show_status(self) -> None:
        self.query_one("#upgrade-slots", LinesPanel).set_lines(
            status_lines(self.view, self.line_width))

    def set_progress(self, what: str, percent: int | None) -> None:
        self.query_one("#upgrade-progress", LinesPanel).set_lines(
            progress_lines(what, percent, self.line_width))

    def say(self, text: str, style: str = "bold") -> None:
        """One line, the screen's whole width (a refusal's reason, as keel says it)."""
        self.query_one("#upgrade-said", LinesPanel).set_lines(
            [Text(one_line(text, self.size.width or 80), style=style)])

    @property
    def busy(self) -> bool:
        return self.state != "idle"

    def _refuse_if_busy(self) -> bool:
        if self.busy:
            self.say(f"{self.state}: wait for it to end")
        return self.busy

    # --- [i] install ---------------------------------------------------------------
    def action_install(self) -> None:
        if self._refuse_if_busy():
            return
        field = self.query_one("#upgrade-target", Input)
        field.display = True
        field.focus()
        self.say("a bundle's path or https URL, [enter] to install it ([esc] back)", "")

    def _hide_input(self) -> None:
        field = self.query_one("#upgrade-target", Input)
        field.value = ""
        field.display = False
        self.set_focus(None)

    def on_guarded_paste_input_refused(self, event: GuardedPasteInput.Refused) -> None:
        self.say(event.why, "bold red")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        try:
            target = check_target(event.value.strip())
        except TargetError as err:
            self.say(str(err), "bold red")
            return
        self._hide_input()
        into = self._other_named()

        def answered(yes: bool | None) -> None:
            if yes:
                self._start_install(target)
            else:
                self.say("not installed", "")

        self.app.push_screen(ConfirmScreen(
            f"Install {one_line(target, 60)} into {into}?\nIts signature, compatible, version "
            "and every byte are checked first. The running slot is not touched; a reboot "
            "follows."), answered)

    def _other_named(self) -> str:
        st = self.view.status if self.view else None
        other = st.other() if st else None
        if other is None:
            return "the slot not running"
        return f"slot {other.name} (now: {one_line(other.version or 'empty', 24)})"

    def _start_install(self, target: str) -> None:
        if self._refuse_if_busy():
            return
        self.state, self.percent = "installing", 0
        self.say("installing: the router keeps running; this takes minutes", "")
        self.set_progress(f"checking {one_line(target, 60)} ...", 0)
        self._install(target)

    @work(thread=True, exclusive=True, group="upgrade-install", exit_on_error=False,
          description="install a bundle")
    def _install(self, target: str) -> None:
        def progress(percent: int, what: str) -> None:
            self.post_message(InstallProgress(percent, what))

        def say(line: str) -> None:
            self.post_message(InstallProgress(None, line))

        def ask(question: str) -> bool:
            message = AskDowngrade(question)
            self.post_message(message)
            message.answered.wait(600)  # the screen gone: no answer, no
            return message.answer

        try:
            pending = self.install(target, progress, say, ask)
        except Exception as err:
            self.post_message(StepDone("install", "", reason(err)))
            return
        self.post_message(StepDone(
            "install", f"keel {one_line(pending.to_version, 30)} is in slot {pending.to_slot}: "
                       f"kept if healthy, else slot {pending.from_slot} again"))

    def on_ask_downgrade(self, message: AskDowngrade) -> None:
        def answered(yes: bool | None) -> None:
            message.answer = bool(yes)
            message.answered.set()

        self.app.push_screen(ConfirmScreen(one_line(message.question, 200)), answered)

    def on_install_progress(self, message: InstallProgress) -> None:
        if message.percent is not None:  # keel's own steps leave the bar where it was
            self.percent = message.percent
        self.set_progress(message.what, self.percent)

    # --- [b] boot the other slot again ---------------------------------------------------
    def action_rollback(self) -> None:
        if self._refuse_if_busy():
            return
        st = self.view.status if self.view else None
        if st is None:
            self.say("the slots are not read yet: [r] reads them again", "bold red")
            return
        if why := flow.rollback_refusal(st):
            self.say(why, "bold red")
            return
        other = st.other()
        assert other is not None

        def answered(yes: bool | None) -> None:
            if yes:
                self.state = "rolling back"
                self.say(f"making slot {other.name} the next boot ...", "")
                self._rollback()
            else:
                self.say("no rollback", "")

        self.app.push_screen(ConfirmScreen(
            f"Boot slot {other.name} ({one_line(other.version, 30)}) again?\nThe slot running "
            "now stays as it is; a reboot follows."), answered)

    @work(thread=True, exclusive=True, group="upgrade-rollback", exit_on_error=False,
          description="boot the other slot again")
    def _rollback(self) -> None:
        try:
            slot = self.rollback()
        except Exception as err:
            self.post_message(StepDone("rollback", "", reason(err)))
            return
        self.post_message(StepDone(
            "rollback", f"slot {slot.name} ({one_line(slot.version, 30)}) boots next"))

    # --- after either: the countdown, then the reboot -------------------------------------
    def on_step_done(self, message: StepDone) -> None:
        self.poll_all()
        if message.error:
            self.state = "idle"
            if message.kind == "install":  # the reason under it
                self.set_progress("not installed; nothing else was touched", None)
                self.say(message.error, "bold red")
            else:
                self.say(f"no rollback: {message.error}", "bold red")
            return
        if message.kind == "install":
            self.set_progress("installed", 100)
        self.state = "countdown"
        self.say(message.next_boot, "")
        next_boot = message.next_boot

        def answered(now: bool | None) -> None:
            if now:
                self.state = "rebooting"
                self.say("rebooting ...", "bold")
                self._reboot()
            else:
                self.state = "idle"
                self.say(f"not rebooted: {next_boot} at the next reboot", "")

        self.app.push_screen(RebootScreen(next_boot, self.reboot_s, id="reboot-screen"),
                             answered)

    @work(thread=True, exclusive=True, group="upgrade-reboot", exit_on_error=False,
          description="reboot")
    def _reboot(self) -> None:
        try:
            self.reboot()
        except Exception as err:
            self.app.call_from_thread(self._reboot_failed, reason(err))

    def _reboot_failed(self, why: str) -> None:
        self.state = "idle"
        self.say(f"reboot failed: {why}", "bold red")

    # --- back ---------------------------------------------------------------------------
    def action_back(self) -> None:
        if self.query_one("#upgrade-target", Input).display:
            self._hide_input()
            self.say("", "")
            return
        if self.state in ("installing", "rolling back", "rebooting"):
            self.say(f"{self.state}: it cannot be stopped halfway; wait for it to end")
            return
        self.app.pop_screen()


class RebootScreen(ModalScreen[bool]):
    """The reboot in `seconds`: [enter] now, any other key cancels.
    Dismisses True (reboot) or False (cancelled)."""

    DEFAULT_CSS = "RebootScreen #reboot-title { text-style: bold; }"

    def __init__(self, next_boot: str, seconds: float = REBOOT_S, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.next_boot, self.seconds = next_boot, seconds
        self.deadline = 0.0
        self.answered = False

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Static("REBOOT", id="reboot-title", markup=False)
            yield Static(self.next_boot, id="reboot-next", markup=False)
            yield Static("", id="reboot-bar", markup=False)
            yield Static("[enter] reboot now   [c] cancel (any other key too)",
                         id="reboot-keys", markup=False)

    def on_mount(self) -> None:
        self.deadline = time.monotonic() + self.seconds
        self.set_interval(0.25, self._tick)
        self._tick()

    def _tick(self) -> None:
        remaining = self.deadline - time.monotonic()
        self.query_one("#reboot-bar", Static).update(
            f"rebooting in {countdown_bar(remaining, self.seconds)}")
        if remaining <= 0:
            self._answer(True)

    def on_key(self, event: events.Key) -> None:
        event.stop()
        event.prevent_default()
        self._answer(event.key == "enter")

    def _answer(self, now: bool) -> None:
        if not self.answered:
            self.answered = True
            self.dismiss(now)
