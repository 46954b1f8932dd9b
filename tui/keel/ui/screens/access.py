"""The console's access screens: root's password on first boot (asked before
anything else, twice, never echoed; or none, on purpose, on a console-only
box) and the SSH keys that may log in (paste a public key; shown as type and
fingerprint). Both are kept on /data (keel.access)."""

from __future__ import annotations

import time
from typing import ClassVar, cast

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import ModalScreen, Screen
from textual.widgets import Input, Static
from textual.worker import Worker, WorkerState

from keel.access.cli import NO_PASSWORD_MEANS
from keel.access.password import PasswordStore, RootPassword
from keel.access.ssh_keys import KeyStore, write_authorized_keys
from keel.parse.ssh_key import parse_public_key, split_key_lines
from keel.ui.app_protocol import ConsoleApp
from keel.ui.dialogs import ConfirmScreen
from keel.ui.widgets.lines import LinesPanel
from keel.ui.widgets.paste_input import GuardedPasteInput

WHY = ("Root's password guards the console's login and the UI's shell key [!]. "
       "SSH never takes it (keys only).")


class SetPasswordScreen(ModalScreen[bool | None]):
    """Dismisses True once a password is set, False when the user chose none,
    None when a password asked again (`reask`) is left as it is."""

    BINDINGS: ClassVar[list[Binding]] = [Binding("escape", "none", "no password")]

    def __init__(self, store: PasswordStore, first_boot: bool = True,
                 reask: str | None = None) -> None:
        super().__init__()
        # reask: why a password that is set is asked again; [esc] then
        # leaves it as it is (dismisses None) instead of choosing none
        self.store, self.first_boot, self.reask = store, first_boot, reask

    def compose(self) -> ComposeResult:
        title = "First boot: set root's password" if self.first_boot else "Root's password"
        esc = ("[esc] not now (it stays as it is)" if self.reask
               else "[esc] no password (a console-only box)")
        with Static(id="dialog"):
            yield Static(f"{title}\n{self.reask or WHY}\n{esc}", markup=False)
            yield Input(password=True, placeholder="new password", id="pw1")
            yield Input(password=True, placeholder="again", id="pw2")
            yield Static("", id="pw-said", markup=False)

    def say(self, text: str) -> None:
        self.query_one("#pw-said", Static).update(text)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        first, second = self.query_one("#pw1", Input), self.query_one("#pw2", Input)
        if event.input is first:
            second.focus()
            return
        if not first.value:
            self.say("empty: type a password, or [esc] for none")
            first.focus()
            return
        if first.value != second.value:
            first.value = second.value = ""
            self.say("the two differ: once more")
            first.focus()
            return
        password = first.value
        first.value = second.value = ""
        first.disabled = second.disabled = True
        self.say("hashing ...")
        # the app's worker, not the screen's (dismissing the screen must not
        # cancel it), and a description of its own: a worker's default one
        # shows its arguments, and this one is the password
        self.app.run_worker(lambda: self._set(password), thread=True, group="set-password",
                            description="hash and keep root's password", exit_on_error=False)

    def _set(self, password: str) -> None:
        try:
            self.store.set(password)
        except (OSError, ValueError) as err:
            self.app.call_from_thread(self._failed, str(err))
            return
        self.app.call_from_thread(self.dismiss, True)

    def _failed(self, why: str) -> None:
        first, second = self.query_one("#pw1", Input), self.query_one("#pw2", Input)
        first.disabled = second.disabled = False
        first.focus()
        self.say(f"not set: {why}")

    def action_none(self) -> None:
        if self.reask:
            self.dismiss(None)
            return

        def answered(yes: bool | None) -> None:
            if yes:
                self.store.skip()
                self.dismiss(False)

        self.app.push_screen(ConfirmScreen(f"No root password? That means: {NO_PASSWORD_MEANS}."),
                             answered)


def key_input() -> GuardedPasteInput:
    """The paste box for one public key: a paste that is not one clean key
    line never enters it (keel.parse.ssh_key says why)."""
    return GuardedPasteInput(
        lambda text: [line for _, line in split_key_lines(text)], lambda ch: " " <= ch <= "~",
        parse_public_key, "paste one key at a time",
        placeholder="paste an SSH public key (ssh-ed25519 AAAA... you@host), enter",
        id="new-key")


class AccessScreen(Screen[None]):
    """Root's password and the SSH keys; paste a public key to add it."""

    BINDINGS: ClassVar[list[Binding]] = [
        Binding("f2", "password", "password"),
        Binding("f3", "remove", "remove the last key"),
        Binding("escape", "back", "back"),
    ]

    def __init__(self, store: PasswordStore, keys: KeyStore,
                 config_keys: tuple[str, ...] = (), **kwargs) -> None:
        super().__init__(**kwargs)
        self.store, self.keys, self.config_keys = store, keys, config_keys

    def compose(self) -> ComposeResult:
        yield LinesPanel(id="access")
        yield key_input()
        yield Static("", id="access-said", markup=False)
        yield Static("[F2] root password  [F3] remove the last key added here  [esc] back",
                     id="footer", markup=False)

    def on_mount(self) -> None:
        self.redraw()
        self.query_one("#new-key", Input).focus()

    def redraw(self) -> None:
        state = self.store.status()
        reason = self.store.locked_reason()
        pw = ("set" if state is RootPassword.SET else
              f"locked: {reason}" if state is RootPassword.LOCKED and reason else
              "locked" if state is RootPassword.LOCKED else
              "cannot be read (not root?)" if state is RootPassword.UNREADABLE else
              "none, on purpose" if self.store.skipped() else "not set yet ([F2])")
        lines = [Text("ACCESS", style="bold"), Text(f"  root password: {pw}"),
                 Text(f"  SSH keys (keys only; {len(self.config_keys)} from the config):",
                      style="bold")]
        # plain Text (never markup): a comment is printable ASCII, "[b]" included
        for line in self.config_keys:
            try:
                lines.append(Text(f"    config  {parse_public_key(line).describe()}"))
            except ValueError:
                continue
        lines += [Text(f"    added   {k.describe()}") for k in self.keys.all()]
        lines += [Text(f"    refused, not in force: line {n} of {self.keys.path}: {why}",
                       style="bold red") for n, why in self.keys.refused()]
        self.query_one("#access", LinesPanel).set_lines(lines)

    def say(self, text: str) -> None:
        self.query_one("#access-said", Static).update(text)

    def _install(self) -> str:
        try:
            write_authorized_keys(self.config_keys, self.keys)
        except OSError as err:
            return f"; not yet in force ({err}): keel apply writes it"
        return ", in force for SSH now"

    def on_guarded_paste_input_refused(self, event: GuardedPasteInput.Refused) -> None:
        self.say(f"not added: {event.why}")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        try:
            key = self.keys.add(event.value)
        except (ValueError, OSError) as err:
            self.say(f"not added: {err}")
            return
        event.input.value = ""
        self.say(f"added {key.describe()}{self._install()}")
        self.redraw()

    def action_remove(self) -> None:
        keys = self.keys.all()
        if not keys:
            self.say("no key added here to remove (the config's stay: edit access.ssh_keys)")
            return
        key = self.keys.remove(keys[-1].fingerprint)
        self.say(f"removed {key.describe()}{self._install()}")
        self.redraw()

    def action_password(self) -> None:
        def done(set_: bool | None) -> None:
            self.say("root password set" if set_ else "no root password")
            self.redraw()

        self.app.push_screen(SetPasswordScreen(self.store, first_boot=False), done)

    def action_back(self) -> None:
        self.app.pop_screen()


class PasswordScreen(ModalScreen[bool]):
    """Asks for the root password; dismisses True once it is right."""

    BINDINGS: ClassVar[list[Binding]] = [Binding("escape", "cancel", "cancel")]
    MAX_TRIES = 3

    def __init__(self) -> None:
        super().__init__()
        self.tries = 0

    def compose(self) -> ComposeResult:
        with Static(id="dialog"):
            yield Static("Root shell: enter the root password ([esc] cancels)", markup=False)
            yield Input(password=True, id="password")
            yield Static("", id="pw-error", markup=False)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.input.disabled = True
        password = event.value
        # a description of its own: a worker's default one shows its arguments
        self.run_worker(lambda: self._verify(password), thread=True, group="password",
                        exclusive=True, description="check root's password",
                        exit_on_error=False)
        event.input.value = ""

    def _verify(self, password: str) -> bool:
        app = cast("ConsoleApp", self.app)
        ok = app.shell.verify(password)
        if not ok:
            time.sleep(app.password_delay)
        return ok

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        # once the worker has ended: a dismiss from inside it (the right
        # password) would cancel the worker that asked for it
        if event.worker.group != "password":
            return
        if event.state == WorkerState.SUCCESS:
            self._verified(bool(event.worker.result))
        elif event.state == WorkerState.ERROR:  # not a wrong password: say what broke
            self._ask_again(f"could not check the password "
                            f"({type(event.worker.error).__name__})")

    def _verified(self, ok: bool) -> None:
        if ok:
            self.dismiss(True)
            return
        self.tries += 1
        if self.tries >= self.MAX_TRIES:
            self.dismiss(False)
            return
        self._ask_again("wrong password")

    def _ask_again(self, why: str) -> None:
        self.query_one("#pw-error", Static).update(why)
        field = self.query_one("#password", Input)
        field.disabled = False
        field.focus()

    def action_cancel(self) -> None:
        self.dismiss(False)
