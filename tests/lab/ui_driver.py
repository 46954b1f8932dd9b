"""Drive the console UI on a guest's serial console by keystrokes, as a
user at a VPS provider's web console would: `keel tui` runs on the serial
line (TERM=vt220: the console profile, 80x24), its output is rendered by a
terminal emulator (pyte) as it comes, and tests wait for words on the
rendered screen before they type the next key."""

from __future__ import annotations

import re
import time

import pexpect
import pyte

from tests.lab.guest import Guest
from tests.lab.paths import LabError

KEYS = {"enter": "\r", "tab": "\t", "escape": "\x1b", "up": "\x1b[A", "down": "\x1b[B",
        "right": "\x1b[C", "left": "\x1b[D", "backspace": "\x7f"}


class ConsoleUI:
    def __init__(self, guest: Guest, cols: int = 80, rows: int = 24) -> None:
        self.guest = guest
        self.child = guest.child
        guest.check(f"stty rows {rows} cols {cols}")
        self.screen = pyte.Screen(cols, rows)
        self.stream = pyte.ByteStream(self.screen)
        self.child.sendline("TERM=vt220 keel tui; echo UI\"\"-DONE")
        self.child.expect("\n")  # the echoed command line

    def pump(self, seconds: float = 0.2) -> None:
        deadline = time.monotonic() + seconds
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return
            try:
                data = self.child.read_nonblocking(65536, timeout=min(left, 0.2))
            except pexpect.TIMEOUT:
                continue
            except pexpect.EOF:
                raise LabError(f"{self.guest.name}: QEMU exited under the UI") from None
            self.stream.feed(data)

    def text(self) -> str:
        return "\n".join(self.screen.display)

    def wait_for(self, pattern: str, timeout: float = 60,
                 others: tuple[ConsoleUI, ...] = ()) -> str:
        """Pump until `pattern` (a regular expression) is on the screen;
        `others`' consoles are read meanwhile, so their guests never block
        on a full serial line."""
        deadline = time.monotonic() + self.guest.accel.scale(timeout)
        while time.monotonic() < deadline:
            self.pump(0.3)
            for other in others:
                other.pump(0.05)
            if re.search(pattern, self.text()):
                return self.text()
        raise LabError(f"{self.guest.name}: no {pattern!r} on the console UI within "
                       f"{self.guest.accel.scale(timeout):.0f} s; the screen:\n{self.text()}")

    def settle(self, most: float, quiet: float) -> None:
        """Pump until the UI has drawn something and then said nothing for
        `quiet` seconds (it has taken the key), or for `most` seconds."""
        now = time.monotonic()
        deadline, last, drawn = now + most, now, False
        while now < deadline:
            try:
                data = self.child.read_nonblocking(65536, timeout=0.05)
            except pexpect.TIMEOUT:
                data = b""
            except pexpect.EOF:
                raise LabError(f"{self.guest.name}: QEMU exited under the UI") from None
            now = time.monotonic()
            if data:
                self.stream.feed(data)
                drawn, last = True, now
            elif drawn and now - last >= quiet:
                return

    def press(self, *keys: str, pause: float = 0.75) -> None:
        """Each argument: a key name (enter, tab, escape, up, down, ...) or
        text typed as it is, all at once, as a fast typist on a slow console
        types: the UI takes keys typed ahead of it one at a time, each once
        the one before has settled (keel.ui.widgets.typeahead), so the text after an
        [enter] lands in the next field. Only after [escape] does the driver
        wait for the UI to draw and then be quiet for a third of `pause` (at
        most `pause`; both scaled for emulation): an escape with another key
        right behind it reads as alt+key."""
        for key in keys:
            self.child.send(KEYS.get(key, key))
            if key == "escape":
                self.settle(self.guest.accel.scale(pause), self.guest.accel.scale(pause / 3))
            else:
                self.pump(0.05)

    def quit(self) -> None:
        self.press("escape", "escape", "escape")
        self.child.send("q")
        self.child.expect("UI-DONE", timeout=self.guest.accel.scale(60))
        self.guest.check("stty sane; true")
