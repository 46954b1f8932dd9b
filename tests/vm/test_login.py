"""The root password a user sets at first boot logs them in where a user
logs in: the console's serial line (ttyS0) and tty1's login, typed on the
guest's own keyboard. BusyBox's login checks it with its own crypt: the
hash must be one it knows (keel.system.crypt.LOGIN_SCHEME)."""

from __future__ import annotations

import pytest

from tests.lab.guest import Guest
from tests.lab.keyboard import Keyboard
from tests.lab.ui_driver import ConsoleUI

pytestmark = pytest.mark.lab("image")

PASSWORD = "keel-Lab-42"  # a test's own, on a lab guest: no secret
WRONG = "keel-lab-42"


def open_first_boot_access(guest: Guest) -> None:
    """Back to access as first booted (S04access with no access state on
    /data: root with no password until the console asks for one)."""
    guest.check("while umount /etc/shadow 2>/dev/null; do :; done; "
                "rm -rf /data/keel/access; /etc/init.d/S04access start")
    assert "not set yet" in guest.check("keel access")


def tty1_screen(guest: Guest) -> str:
    return guest.check("cat /dev/vcs1")


def tty1_shows(guest: Guest, words: str, timeout: float = 60) -> None:
    guest.until(f"grep -q '{words}' /dev/vcs1", timeout)


@pytest.fixture(scope="module")
def guest(shared_lab):
    guest = shared_lab.bios
    guest.check("mkdir -p /run/keel; touch /run/keel/tty1-off; "
                "pkill -f 'keel tui --console'; true")
    open_first_boot_access(guest)
    yield guest
    # as the lab leaves its guests: no password, on purpose
    open_first_boot_access(guest)
    guest.check("keel access no-password >/dev/null")


def test_the_password_set_at_first_boot_logs_in_on_the_serial_console(guest):
    ui = ConsoleUI(guest)
    ui.wait_for(r"First boot: set root's password", 180)
    ui.press(PASSWORD, "enter", PASSWORD, "enter")
    # the dialog gone: the first-boot wizard opens (over the footer saying so)
    ui.wait_for(r"step 1/\d", 120)
    assert PASSWORD not in ui.text()
    ui.press("escape")  # the wizard left for later
    ui.wait_for(r"Leave the setup\?")
    ui.press("y")
    ui.wait_for(r"\[q\]uit")  # the dashboard
    ui.quit()
    # stored in the scheme the console's login checks (the hash is not shown)
    assert guest.check("grep -c '^root:[$]6[$]rounds=' /etc/shadow") == "1"
    assert guest.check("grep -c '^root:[$]6[$]rounds=' /data/keel/access/shadow") == "1"

    console = guest.console
    assert console is not None
    console.child.sendline("exit")  # the getty on ttyS0 comes back
    assert not console.login_with_password(WRONG)
    assert console.login_with_password(PASSWORD)
    assert guest.check("tty") == "/dev/ttyS0"
    assert guest.check("id -u") == "0"


def test_the_same_password_logs_in_on_tty1s_login_from_the_keyboard(guest):
    assert guest.check("grep -c '^root:[$]6[$]' /etc/shadow") == "1"  # set above
    # tty1's fallback: the login that takes over when the UI is off or fails
    guest.check("pkill -f 'keel tui --console'; true")
    guest.until("pgrep -f 'getty 38400 tty1'", 120)
    guest.check("rm -f /run/tty1-in; printf '\\033[H\\033[2J' > /dev/tty1")
    with Keyboard(guest.qmp) as keys:
        keys.type("\n")
        tty1_shows(guest, "login:")
        keys.type("root\n")
        tty1_shows(guest, "Password:")
        keys.type(WRONG + "\n")
        tty1_shows(guest, "Login incorrect", 90)
        guest.check("printf '\\033[H\\033[2J' > /dev/tty1")
        keys.type("root\n")
        tty1_shows(guest, "Password:")
        keys.type(PASSWORD + "\n")
        keys.type("tty > /run/tty1-in\n")
        guest.until("test -s /run/tty1-in", 90)
        assert guest.check("cat /run/tty1-in") == "/dev/tty1"
        assert PASSWORD not in tty1_screen(guest)  # never echoed
        keys.type("exit\n")
