"""The keel console app: wiring of collectors, screens and the root shell."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, ClassVar

from textual import events
from textual.app import App, SuspendNotSupported
from textual.binding import Binding
from textual.driver import Driver

from keel.access.password import PasswordStore
from keel.access.ssh_keys import KeyStore
from keel.shown import shown
from keel.ui.app_protocol import AdaptiveOffer, ApplyAdaptive, ApplyRates, KeepApplied
from keel.ui.dialogs import MessageScreen
from keel.ui.history_view import Loader
from keel.ui.profile import MODERN, Profile, theme_name
from keel.ui.screens.access import AccessScreen, PasswordScreen, SetPasswordScreen
from keel.ui.screens.dashboard import DashboardScreen
from keel.ui.screens.selftest import SelfTestScreen
from keel.ui.screens.verdicts import VerdictsScreen
from keel.ui.selftest import MeasuredRates, RecommendedRates, SelfTestRunner
from keel.ui.shell import RootPassword, RootShell
from keel.ui.widgets.footer import Footer
from keel.ui.widgets.typeahead import Typeahead
from keel.upgrade.record import Records

NO_PASSWORD = ("root has no password, so the console will not open a shell.\n"
               "Set one first ([p] access, or keel access password), then press [!] again.")
LOCKED = "root's password is locked: no shell from the console."
REHASH_WHY = ("An earlier keel stored root's password as yescrypt, which the console's "
              "login (serial line, tty1) cannot check: it refuses the right password. "
              "Type it again (or a new one) to store it as SHA-512.")
UNREADABLE = "cannot read /etc/shadow (not root?): no shell from the console."


def apply_recommended(rates: RecommendedRates) -> str:
    """The config in force with these CAKE rates, applied with confirm."""
    from keel.apply.rates import apply_rates
    from keel.config.errors import ConfigError
    from keel.model.reading import InvalidConfig

    try:
        return apply_rates(rates.egress_bps // 1000, rates.ingress_bps // 1000)[1]
    except InvalidConfig as err:
        return f"not applied: the config in force is invalid: {err.summary()}"
    except ConfigError as err:
        return f"not applied: {err.summary()}"


def apply_recommended_adaptive(rates: RecommendedRates, measured: MeasuredRates) -> str:
    """The config in force with adaptive CAKE around these rates (the rule:
    keel.apply.rates.adaptive_bounds), applied with confirm."""
    from keel.apply.rates import apply_rates
    from keel.config.errors import ConfigError
    from keel.model.reading import InvalidConfig

    try:
        return apply_rates(rates.egress_bps // 1000, rates.ingress_bps // 1000,
                           measured=(measured.egress_bps // 1000,
                                     measured.ingress_bps // 1000))[1]
    except InvalidConfig as err:
        return f"not applied: the config in force is invalid: {err.summary()}"
    except ConfigError as err:
        return f"not applied: {err.summary()}"


def config_adaptive_offer() -> str | None:
    """Why the config in force cannot take adaptive CAKE (None: it can)."""
    from keel.apply.rates import adaptive_refusal
    from keel.model.reading import InvalidConfig, config_in_force, read_loaded

    try:
        return adaptive_refusal(read_loaded(config_in_force()).config)
    except InvalidConfig:
        return "the config in force is invalid"
    except OSError as err:
        return f"cannot read the config in force: {err.strerror or err}"


def keep_applied() -> str:
    """`keel confirm`: keep what was applied with confirm."""
    from keel.apply.rates import confirm

    return confirm()


def config_ssh_keys() -> tuple[str, ...]:
    """The SSH keys the config in force lists (none when it is invalid)."""
    from keel.model.reading import InvalidConfig, config_in_force, read_model

    try:
        return read_model(config_in_force()).access.ssh_keys
    except (InvalidConfig, OSError):
        return ()


def default_runner() -> SelfTestRunner:
    from keel.ui.selftest_runner import KeelSelfTestRunner

    return KeelSelfTestRunner()


TTY1_READY = Path("/run/keel/tty1-ui.ready")


def mark_tty1_ready(path: Path = TTY1_READY) -> None:
    """The UI has drawn on tty1: one of the upgrade gate's health signs."""
    from keel.system.console import on_tty1

    try:
        if on_tty1():
            path.write_text(f"{os.getpid()}\n")
    except OSError:
        pass


class KeelApp(App):
    CSS_PATH = "keel.tcss"
    TITLE = "keel"
    BINDINGS: ClassVar[list[Binding]] = [
        Binding("q", "quit", "quit"),
        Binding("s", "selftest", "self-test"),
        Binding("v", "verdicts", "verdicts"),
        Binding("p", "access", "access"),
        Binding("c", "settings", "settings"),
        Binding("h", "revisions", "revisions"),
        Binding("w", "setup", "setup wizard"),
        Binding("t", "peers", "tunnel peers and pairing"),
        Binding("u", "upgrade", "upgrade: slots, install, rollback"),
        Binding("y", "history", "history: latency, causes, events"),
        Binding("exclamation_mark,f10", "shell", "shell"),
        Binding("r", "poll_now", "poll now"),
    ]

    def __init__(self, collectors: Mapping[str, Any], profile: Profile = MODERN,
                 runner: SelfTestRunner | None = None, apply_rates: ApplyRates | None = None,
                 keep: KeepApplied | None = None, apply_adaptive: ApplyAdaptive | None = None,
                 adaptive_offer: AdaptiveOffer | None = None,
                 shell: RootShell | None = None, intervals: Mapping[str, float] | None = None,
                 password_delay: float = 2.0, quit_after: float | None = None,
                 passwords: PasswordStore | None = None, key_store: KeyStore | None = None,
                 user_config: Path | None = None, setup: Callable[[bool], Any] | None = None,
                 typeahead: bool | None = None,
                 upgrade_records: Records | None = None, history: Loader | None = None) -> None:
        super().__init__(ansi_color=profile.console)
        self.collectors = dict(collectors)
        self.profile = profile
        self.runner = runner or default_runner()
        self.apply_rates = apply_rates or apply_recommended
        self.apply_adaptive = apply_adaptive or apply_recommended_adaptive
        self.adaptive_offer = adaptive_offer or config_adaptive_offer
        self.keep_applied = keep or keep_applied
        self.shell = shell or RootShell()
        self.intervals = dict(intervals or {})
        self.password_delay = password_delay
        self.quit_after = quit_after
        self.latency_running = False
        self.passwords = passwords or PasswordStore()
        if self.shell.rehash is None:
            self.shell.rehash = self.passwords.set
        self.key_store = key_store or KeyStore()
        # how the last upgrade ended: shown once after a rollback or a broken install
        self.upgrade_records = upgrade_records or Records()
        # first boot: the setup wizard when this file is absent (None: never)
        self.user_config = user_config
        self.make_setup = setup
        # keys typed ahead of the UI taken one at a time (keel.ui.widgets.typeahead);
        # None: on a terminal, off headless (the tests' pilot waits itself)
        self.typeahead_on = typeahead
        self._typeahead: Typeahead | None = None
        # the history screen's loader (None: the store on /data, opened at its first load)
        self.history_loader = history

    async def on_event(self, event: events.Event) -> None:
        if (isinstance(event, events.Key) and not event.is_forwarded
                and (typeahead := self._keys_in_turn()) is not None
                and typeahead.holds(event)):
            return
        await super().on_event(event)

    def _keys_in_turn(self) -> Typeahead | None:
        if self._typeahead is None:
            if self.typeahead_on is None:
                self.typeahead_on = not self.is_headless
            if self.typeahead_on:
                self._typeahead = Typeahead(self)
        return self._typeahead

    def get_driver_class(self) -> type[Driver]:
        """Textual's Linux driver with a quieter input thread (keel.ui.driver);
        whatever Textual chooses elsewhere (TEXTUAL_DRIVER, tests' headless)."""
        from textual.drivers.linux_driver import LinuxDriver

        from keel.ui.driver import QuietLinuxDriver

        chosen = super().get_driver_class()
        return QuietLinuxDriver if chosen is LinuxDriver else chosen

    def interval(self, name: str) -> float:
        default = {"tuning": self.profile.data_interval * 5,
                   "latency": self.profile.latency_interval}.get(name, self.profile.data_interval)
        return self.intervals.get(name, default)

    def get_default_screen(self) -> DashboardScreen:
        return DashboardScreen(id="dashboard")

    def on_mount(self) -> None:
        self.theme = theme_name(self.profile, set(self.available_themes))
        self.call_after_refresh(mark_tty1_ready)
        if self.quit_after:
            self.set_timer(self.quit_after, self.exit)
        self.resume_latency()
        if self.passwords.needs_asking():  # first boot: before anything else
            self.push_screen(SetPasswordScreen(self.passwords), self._password_answered)
        elif self.passwords.needs_rehash():  # stored by an earlier keel: asked again
            self.push_screen(SetPasswordScreen(self.passwords, first_boot=False,
                                               reask=REHASH_WHY), self._password_reasked)
        else:
            if reason := self.passwords.locked_reason():  # the boot failed closed
                self.call_after_refresh(self.say, f"root is locked: {reason}")
            self._first_boot_setup()
            self._upgrade_notice()

    def _upgrade_notice(self) -> None:
        """After the boot that follows an upgrade rolled back (or an install
        that failed or was cut): why, on the console, until closed once."""
        notice = self.upgrade_records.notice()
        if notice is None:
            return

        def closed(_: None) -> None:
            with contextlib.suppress(OSError):
                self.upgrade_records.notice_seen(notice)

        self.push_screen(MessageScreen(shown(f"keel: {notice.line()}. [u] shows the slots.",
                                             400)), closed)

    def _password_answered(self, set_: bool | None) -> None:
        self.say("root password set" if set_ else "no root password: [p] sets one later")
        self._first_boot_setup()

    def _password_reasked(self, set_: bool | None) -> None:
        self.say("root password stored again: the console's login checks it" if set_
                 else "root's password unchanged: the console's login cannot check it "
                      "([p] sets it)")
        self._first_boot_setup()

    def _first_boot_setup(self) -> None:
        """No user config yet: the setup wizard (after root's password)."""
        if self.user_config is not None and not self.user_config.exists():
            self.action_setup(first_boot=True)

    def action_setup(self, first_boot: bool = False) -> None:
        from keel.ui.screens.setup import SetupScreen, setup_screen

        if not isinstance(self.screen, SetupScreen):
            self.push_screen((self.make_setup or setup_screen)(first_boot))

    def action_settings(self) -> None:
        from keel.ui.screens.settings import SettingsScreen, settings_screen

        if not isinstance(self.screen, SettingsScreen):
            self.push_screen(settings_screen())

    def action_revisions(self) -> None:
        from keel.ui.screens.revisions import RevisionsScreen

        if not isinstance(self.screen, RevisionsScreen):
            self.push_screen(RevisionsScreen(id="revisions-screen"))

    def action_peers(self) -> None:
        from keel.ui.screens.peers import PeersScreen

        if not isinstance(self.screen, PeersScreen):
            self.push_screen(PeersScreen(id="peers-screen"))

    def action_upgrade(self) -> None:
        from keel.ui.screens.upgrade import UpgradeScreen

        if not isinstance(self.screen, UpgradeScreen):
            self.push_screen(UpgradeScreen(id="upgrade-screen"))

    def action_history(self) -> None:
        from keel.ui.screens.history import HistoryScreen, StoreLoader

        if not isinstance(self.screen, HistoryScreen):
            self.history_loader = self.history_loader or StoreLoader()
            self.push_screen(HistoryScreen(self.history_loader, id="history-screen"))

    def action_access(self) -> None:
        if not isinstance(self.screen, AccessScreen):
            self.push_screen(AccessScreen(self.passwords, self.key_store, config_ssh_keys(),
                                          id="access-screen"))

    def on_unmount(self) -> None:
        self.pause_latency()

    def pause_latency(self) -> None:
        """Stop the dashboard's pingers (while a self-test probes on its own)."""
        latency = self.collectors.get("latency")
        if latency is not None and hasattr(latency, "stop"):
            latency.stop()
        self.latency_running = False

    def resume_latency(self) -> None:
        """Start them again: new ping processes, new trackers."""
        latency = self.collectors.get("latency")
        if latency is not None and hasattr(latency, "start"):
            latency.start()
        self.latency_running = True

    def action_selftest(self) -> None:
        if not isinstance(self.screen, SelfTestScreen):
            self.push_screen(SelfTestScreen(id="selftest"))

    def action_verdicts(self) -> None:
        if not isinstance(self.screen, VerdictsScreen):
            self.push_screen(VerdictsScreen(id="verdicts-screen"))

    def action_poll_now(self) -> None:
        poll_all = getattr(self.screen, "poll_all", None)
        if poll_all is not None:
            poll_all()

    def action_shell(self) -> None:
        status = self.shell.status()
        if status is not RootPassword.SET:
            text = {RootPassword.EMPTY: NO_PASSWORD, RootPassword.LOCKED: LOCKED}.get(
                status, UNREADABLE)
            self.push_screen(MessageScreen(text))
            return

        def answered(ok: bool | None) -> None:
            if ok:
                self.open_shell()
            else:
                self.say("no shell: wrong password")

        self.push_screen(PasswordScreen(), answered)

    def open_shell(self) -> None:
        try:
            with self.suspend():
                self.shell.launch()
        except SuspendNotSupported:
            self.shell.launch()  # headless (tests): nothing to suspend
        self.say("back from the shell")

    def say(self, text: str) -> None:
        footers = self.screen.query(Footer)
        if footers:
            footers.first().say(text)
