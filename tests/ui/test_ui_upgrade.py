"""Pilot tests of the upgrade screen ([u]) at 80x24 on the console profile:
the slots, the trial and the last outcome; an install ([i]) with its
progress, then the reboot countdown ([enter] now, any other key cancels,
no answer reboots); refusals in one line, escaped; the rollback ([b])
refused for an empty or a bad slot. The status, the install, the rollback
and the reboot are fakes: no system is touched (one test drives the real
keel.upgrade.flow over a patched keel.upgrade.system)."""

from __future__ import annotations

import threading

from textual import events
from textual.widgets import Input

from keel.ui.dialogs import ConfirmScreen
from keel.ui.profile import CONSOLE, MODERN
from keel.ui.screens.dashboard import DashboardScreen
from keel.ui.screens.upgrade import RebootScreen, UpgradeScreen, one_line
from keel.upgrade import record, system
from keel.upgrade.record import Outcome, Pending
from keel.upgrade.slots import SlotView, UpgradeStatus
from tests.ui.uihelpers import asynctest, make_app, screen_lines, settle

ROLLED_BACK = Outcome("rolled back", "A", "0.4.0", "no handshake with hub in 180 s", 1.0)


def status(other_version: str = "0.2.0", other_state: str = "good",
           pending: Pending | None = None, last: Outcome | None = ROLLED_BACK,
           problem: str = "") -> UpgradeStatus:
    """Slot A booted; B holds `other_version`, and boots next with a trial."""
    trial = pending is not None
    return UpgradeStatus("A", (SlotView("A", "0.3.0", True, "good", not trial),
                               SlotView("B", other_version, False, other_state, trial)),
                         pending, last, problem)


class FakeUpgrade:
    """The screen's steps: a status to read, an install that reports its
    progress and can be held half-way, a rollback, a reboot that counts."""

    def __init__(self, st: UpgradeStatus | None = None, refuse: str = "") -> None:
        self.status = st or status()
        self.refuse = refuse
        self.installs: list[str] = []
        self.rollbacks = 0
        self.reboots = 0
        self.halfway = threading.Event()
        self.go_on = threading.Event()
        self.go_on.set()

    def read(self) -> UpgradeStatus:
        return self.status

    def install(self, target, progress, say, ask=None) -> Pending:
        self.installs.append(target)
        say(f"checking {target}: signature and compatible ...")
        if self.refuse:
            raise system.UpgradeError(self.refuse)
        say("installing keel 0.4.0 into slot B (running: 0.3.0 in slot A)")
        progress(0, "Installing")
        progress(40, "Copying image to rootfs.1")
        self.halfway.set()
        self.go_on.wait(10)
        progress(100, "Installing done.")
        pending = Pending("A", "B", "0.3.0", "0.4.0", ())
        self.status = status("0.4.0", "new", pending)
        return pending

    def rollback(self) -> SlotView:
        self.rollbacks += 1
        return self.status.slots[1]

    def reboot(self) -> None:
        self.reboots += 1

    def screen(self, reboot_s: float = 60.0) -> UpgradeScreen:
        return UpgradeScreen(read=self.read, install=self.install, rollback=self.rollback,
                             reboot=self.reboot, reboot_s=reboot_s, id="upgrade-screen")


def text_of(app) -> str:
    text = "\n".join(screen_lines(app))
    assert text.isascii()  # the console profile draws nothing outside ASCII
    return text


async def opened(app, pilot, fake: FakeUpgrade, reboot_s: float = 60.0) -> UpgradeScreen:
    await settle(pilot)
    screen = fake.screen(reboot_s)
    app.push_screen(screen)
    await settle(pilot)
    return screen


async def until(pilot, check, tries: int = 200) -> None:
    for _ in range(tries):
        if check():
            return
        await pilot.pause(0.02)
    raise AssertionError("never came")


async def install(pilot, target: str = "/data/keel-0.4.0.raucb") -> None:
    await pilot.press("i", *target, "enter")
    await pilot.pause()
    assert isinstance(pilot.app.screen, ConfirmScreen)
    await pilot.press("y")


@asynctest
async def test_u_opens_the_slots_and_the_last_outcome_read_through_keel_upgrade(monkeypatch):
    reads = []

    def read_status():  # the screen's default reader is keel.upgrade.system's
        reads.append(threading.current_thread() is threading.main_thread())
        return status(pending=Pending("A", "B", "0.3.0", "0.4.0", ()), other_state="new",
                      other_version="0.4.0")

    monkeypatch.setattr(system, "read_status", read_status)
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("u")
        await settle(pilot)
        assert isinstance(app.screen, UpgradeScreen)
        text = text_of(app)
        assert "slot A  0.3.0                    good    booted\n" in text
        assert "slot B  0.4.0                    new     next boot\n" in text
        assert "trial   keel 0.4.0 in slot B, kept after its first healthy boot" in text
        assert "last    upgrade to 0.4.0 rolled back: no handshake with hub in 180 s" in text
        assert reads == [False]  # read on a worker thread, never the UI's
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, DashboardScreen)


@asynctest
async def test_an_install_shows_its_progress_then_the_countdown_and_enter_reboots():
    fake = FakeUpgrade()
    fake.go_on.clear()
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await opened(app, pilot, fake)
        await install(pilot)
        await until(pilot, fake.halfway.is_set)
        await until(pilot, lambda: "Copying image to rootfs.1" in text_of(app))
        text = text_of(app)
        assert "[################........................]  40%" in text
        await pilot.press("escape")  # an install cannot be left half-way
        await pilot.pause()
        assert app.screen is screen and "cannot be stopped halfway" in text_of(app)
        fake.go_on.set()
        await until(pilot, lambda: isinstance(app.screen, RebootScreen))
        # the screen is there before it has drawn (a busy host shows the gap)
        await until(pilot, lambda: "rebooting in [" in text_of(app))
        text = text_of(app)
        assert "keel 0.4.0 is in slot B: kept if healthy, else slot A again" in text
        assert "rebooting in [" in text and "[enter] reboot now" in text
        await pilot.press("enter")
        await settle(pilot)
        assert fake.installs == ["/data/keel-0.4.0.raucb"] and fake.reboots == 1
        assert app.screen is screen and "rebooting ..." in text_of(app)


@asynctest
async def test_no_answer_reboots_when_the_countdown_ends():
    fake = FakeUpgrade()
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await opened(app, pilot, fake, reboot_s=0.3)
        await install(pilot, "https://updates.example/keel-0.4.0.raucb")
        await until(pilot, lambda: fake.reboots == 1)
        assert fake.installs == ["https://updates.example/keel-0.4.0.raucb"]


@asynctest
async def test_c_or_any_other_key_cancels_the_reboot():
    for key in ("c", "space"):
        fake = FakeUpgrade()
        app = make_app()
        async with app.run_test(size=(80, 24)) as pilot:
            screen = await opened(app, pilot, fake)
            await install(pilot)
            await until(pilot, lambda a=app: isinstance(a.screen, RebootScreen))
            await pilot.press(key)
            await settle(pilot)
            assert app.screen is screen and fake.reboots == 0
            text = text_of(app)
            assert "not rebooted: keel 0.4.0 is in slot B: kept if healthy" in text
            assert "slot B  0.4.0" in text and "trial   keel 0.4.0 in slot B" in text  # read again
            await pilot.press("escape")
            await pilot.pause()
            assert isinstance(app.screen, DashboardScreen)


@asynctest
async def test_a_refused_bundle_says_why_in_one_escaped_line_and_nothing_follows():
    fake = FakeUpgrade(refuse="bundle is for evil\x1b[2J\nboard, this router is "
                              "keel-x86_64: refused, nothing written")
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await opened(app, pilot, fake)
        await install(pilot)
        await settle(pilot)
        assert app.screen is screen and fake.reboots == 0
        lines = screen_lines(app)
        at = lines.index("  not installed; nothing else was touched")
        # the reason under it (the bar's line is empty): one line, escaped, cut to the width
        assert lines[at + 2] == ("bundle is for evil\\x1b[2J board, this router is keel-x86_64: "
                                 "refused, nothing..."), lines
        assert lines[at + 3] == ""


class OlderBundle(FakeUpgrade):
    """An install whose bundle holds an older keel: it asks (the flow's ask)."""

    def __init__(self) -> None:
        super().__init__()
        self.answers: list[bool] = []

    def install(self, target, progress, say, ask=None) -> Pending:
        yes = ask("install an older keel? The bundle holds 0.2.0; this router runs 0.3.0.")
        self.answers.append(yes)
        if not yes:
            raise system.UpgradeError("the bundle holds keel 0.2.0, older than the running "
                                      "0.3.0: refused, nothing written")
        return super().install(target, progress, say)


@asynctest
async def test_an_older_keel_is_installed_only_when_the_console_says_yes():
    """issue 37 item 4: the console asks "install an older keel?"."""
    for key, installed in (("n", False), ("y", True)):
        await _older_keel_answered(key, installed)


async def _older_keel_answered(key: str, installed: bool) -> None:
    fake = OlderBundle()
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await opened(app, pilot, fake)
        await install(pilot)
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        assert "install an older keel?" in text_of(app)
        await pilot.press(key)
        await until(pilot, lambda: fake.answers != [])
        assert fake.answers == [installed]
        if installed:
            await until(pilot, lambda: isinstance(app.screen, RebootScreen))
        else:
            await settle(pilot)
            assert "older than the running 0.3.0: refused" in text_of(app)


@asynctest
async def test_a_target_that_is_no_bundle_is_refused_as_typed():
    fake = FakeUpgrade()
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await opened(app, pilot, fake)
        await pilot.press("i", *"ftp://updates.example/k.raucb", "enter")
        await pilot.pause()
        assert app.screen is screen
        assert "ftp:// is not https://" in text_of(app)
        field = screen.query_one("#upgrade-target", Input)
        field.value = ""
        # a paste with control characters never enters the box (drawn as it is)
        field.post_message(events.Paste("/data/k\x1b]0;x\x07.raucb"))
        await pilot.pause()
        text = text_of(app)
        assert "the bundle's name holds \\x1b" in text and "\x1b" not in text
        assert field.value == ""
        field.post_message(events.Paste("/data/a.raucb\n/data/b.raucb\n"))
        await pilot.pause()
        assert "2 lines pasted: paste one path or URL" in text_of(app) and field.value == ""
        field.post_message(events.Paste("https://updates.example/keel-0.4.0.raucb\r\n"))
        await pilot.pause()
        assert field.value == "https://updates.example/keel-0.4.0.raucb"
        await pilot.press("left", "space", "enter")  # typed: refused as it is submitted
        await pilot.pause()
        assert "the bundle's name holds" in text_of(app) and app.screen is screen
        await pilot.press("escape")  # the field first, then the screen
        await pilot.pause()
        assert app.screen is screen and not field.display
        assert fake.installs == []


@asynctest
async def test_the_rollback_is_refused_for_an_empty_or_a_bad_slot():
    for st, why in ((status("", "empty", last=None),
                     "the other slot holds no keel to roll back to"),
                    (status("0.4.0", "bad"),
                     "slot B (0.4.0) was rolled back as unhealthy; install a bundle instead")):
        fake = FakeUpgrade(st)
        app = make_app()
        async with app.run_test(size=(80, 24)) as pilot:
            screen = await opened(app, pilot, fake)
            await pilot.press("b")
            await pilot.pause()
            assert app.screen is screen and why in text_of(app)
            assert fake.rollbacks == 0


@asynctest
async def test_the_rollback_asks_then_counts_down_like_an_install():
    fake = FakeUpgrade()
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await opened(app, pilot, fake)
        await pilot.press("b")
        await pilot.pause()
        assert "Boot slot B (0.2.0) again?" in text_of(app)
        await pilot.press("n")
        await settle(pilot)
        assert fake.rollbacks == 0
        await pilot.press("b", "y")
        await until(pilot, lambda: isinstance(app.screen, RebootScreen))
        await until(pilot, lambda: "slot B (0.2.0) boots next" in text_of(app))
        await pilot.press("enter")
        await settle(pilot)
        assert fake.rollbacks == 1 and fake.reboots == 1


@asynctest
async def test_the_default_install_is_keel_upgrade_s_own_steps(monkeypatch, tmp_path):
    """No fake installer: keel.upgrade.flow over keel.upgrade.system (its
    commands patched), the trial recorded where Records keeps it."""
    bundle = tmp_path / "keel-0.4.0.raucb"
    bundle.write_bytes(b"bundle")
    calls = []
    monkeypatch.setattr(record.Records.__init__, "__defaults__", (tmp_path / "records",))
    monkeypatch.setattr(system, "read_status", lambda records=None: status())
    monkeypatch.setattr(system, "bundle_info",
                        lambda path: system.BundleInfo("other-board", "0.4.0"))
    monkeypatch.setattr(system, "compatible", lambda: "keel-x86_64")
    monkeypatch.setattr(system, "sessions", lambda: (("key", "hub"),))
    monkeypatch.setattr(system, "check_payload", lambda path, progress: 100)
    monkeypatch.setattr(system, "slot_devices", lambda name: ())
    monkeypatch.setattr(system, "install",
                        lambda path, progress, written=None, total=0: calls.append(path))
    reboots = []
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        screen = UpgradeScreen(reboot=lambda: reboots.append(1), reboot_s=60.0)
        app.push_screen(screen)
        await settle(pilot)
        await install(pilot, str(bundle))
        await settle(pilot)
        assert "bundle is for other-board, this router is keel-x86_64: refused, nothing " \
               "written" in text_of(app)
        assert calls == [] and record.Records().pending() is None
        monkeypatch.setattr(system, "bundle_info",
                            lambda path: system.BundleInfo("keel-x86_64", "0.4.0"))
        await install(pilot, str(bundle))
        await until(pilot, lambda: isinstance(app.screen, RebootScreen))
        assert calls == [str(bundle)]
        pending = record.Records().pending()
        assert pending is not None and (pending.to_slot, pending.to_version) == ("B", "0.4.0")
        assert pending.peers == (("key", "hub"),)
        await pilot.press("c")
        await settle(pilot)
        assert reboots == []


def test_one_line_escapes_and_cuts():
    assert one_line("a\nb\x1b[2J\\x07 c") == "a b\\x1b[2J\\x07 c"
    assert one_line("x" * 100, 20) == "x" * 17 + "..."


# --- snapshots -------------------------------------------------------------------------

def _open_upgrade(st: UpgradeStatus):
    async def run_before(pilot) -> None:
        await opened(pilot.app, pilot, FakeUpgrade(st))
    return run_before


TRIAL = status("0.4.0", "new", Pending("A", "B", "0.3.0", "0.4.0", ()))


def test_upgrade_console_80x24(snap_compare):
    assert snap_compare(make_app(CONSOLE), terminal_size=(80, 24),
                        run_before=_open_upgrade(TRIAL))


def test_upgrade_modern_120x40(snap_compare):
    assert snap_compare(make_app(MODERN), terminal_size=(120, 40),
                        run_before=_open_upgrade(TRIAL))


@asynctest
async def test_after_a_rollback_the_old_slots_console_says_why_once(tmp_path):
    """The gate rolled the trial back on the new slot's boot; the old slot's
    console UI says why when it starts, until closed once."""
    records = record.Records(tmp_path)
    records.set_last(Outcome("rolled back", "A", "0.9.0",
                             "the user's config was not applied: wan.bogus: unknown key"))
    app = make_app(upgrade_records=records)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        text = "\n".join(screen_lines(app))
        assert "upgrade to 0.9.0 rolled back" in text and "wan.bogus: unknown key" in text
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, DashboardScreen)
    assert records.notice() is None  # closed once: not shown again
    again = make_app(upgrade_records=records)
    async with again.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert isinstance(again.screen, DashboardScreen)


@asynctest
async def test_a_kept_upgrade_is_no_notice(tmp_path):
    records = record.Records(tmp_path)
    records.set_last(Outcome("kept", "B", "0.9.0"))
    app = make_app(upgrade_records=records)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert isinstance(app.screen, DashboardScreen)
