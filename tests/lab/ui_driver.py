"""Drive the console UI on a guest's serial console by keystrokes, as a
user at a VPS provider's web console would: `keel tui` runs on the serial
line (TERM=vt220: the console profile, 80x24), its output is rendered by a
terminal emulator (pyte) as it comes, and tests wait for words on the
rendered screen before they type the next key.

The driver answers Textual's question whether the terminal has synchronized
output (DEC mode 2026, as xterm.js, kitty and foot have): yes. Textual then
brackets each frame (ESC[?2026h ... ESC[?2026l), and ends each with the
cursor at the focused input's caret. So the driver knows when a frame is
whole, and where the focus is: text that follows a key (Tab, Enter) is typed
once a whole frame shows the focus moved. Textual forwards keys to the
widget focused when they arrive, and moves the focus after the keys already
queued: on a busy host, text typed at once went into the field just left."""

from __future__ import annotations

import re
import time

import pexpect
import pyte

from tests.lab.guest import Guest
from tests.lab.paths import LabError

# the longest text that follows a key waits for a frame that shows the focus
# moved (seconds, scaled for emulation); a key that leaves the focus where it
# was (one field) then gets its text after this wait
TEXT_WAIT_S = 15
SYNC_QUERY = b"\x1b[?2026$p"  # DECRQM: is mode 2026 (synchronized output) known?
SYNC_REPLY = b"\x1b[?2026;2$y"  # DECRPM: known, reset (Textual sets it per frame)
FRAME_END = b"\x1b[?2026l"
KEYS = {"enter": "\r", "tab": "\t", "escape": "\x1b", "up": "\x1b[A", "down": "\x1b[B",
        "right": "\x1b[C", "left": "\x1b[D", "backspace": "\x7f"}


class Terminal:
    """A terminal (pyte) that says it has synchronized output, counts the
    frames an application brackets with it and notes where each leaves the
    cursor."""

    def __init__(self, cols: int = 80, rows: int = 24) -> None:
        self.screen = pyte.Screen(cols, rows)
        self.stream = pyte.ByteStream(self.screen)
        self._held = b""  # the start of a marker split between two reads
        self.asked = False  # the application asked whether mode 2026 is known
        self.frames = 0  # whole frames drawn
        self.cursor = (0, 0)  # (x, y) where the last whole frame left it

    def feed(self, data: bytes) -> bool:
        """Render `data`; True if it completes the application's question
        (answer it with SYNC_REPLY), the first time only."""
        data = self._held + data
        ask = not self.asked and SYNC_QUERY in data
        self.asked = self.asked or ask
        while (end := data.find(FRAME_END)) >= 0:
            end += len(FRAME_END)
            self.stream.feed(data[:end])
            data = data[end:]
            self.frames += 1
            self.cursor = (self.screen.cursor.x, self.screen.cursor.y)
        # hold back what may be the start of a marker the next read completes
        keep = max((n for n in range(1, len(SYNC_QUERY))
                    if data.endswith(FRAME_END[:n]) or data.endswith(SYNC_QUERY[:n])),
                   default=0)
        self._held = data[len(data) - keep:] if keep else b""
        self.stream.feed(data[:len(data) - keep])
        return ask


class ConsoleUI:
    def __init__(self, guest: Guest, cols: int = 80, rows: int = 24) -> None:
        self.guest = guest
        self.child = guest.child
        guest.check(f"stty rows {rows} cols {cols}")
        self.term = Terminal(cols, rows)
        self.screen = self.term.screen
        self.child.sendline("TERM=vt220 keel tui; echo UI\"\"-DONE")
        self.child.expect("\n")  # the echoed command line

    def feed(self, data: bytes) -> None:
        if self.term.feed(data):
            self.child.send(SYNC_REPLY)

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
            self.feed(data)

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
                self.feed(data)
                drawn, last = True, now
            elif drawn and now - last >= quiet:
                return

    def press(self, *keys: str, pause: float = 0.75) -> None:
        """Each argument: a key name (enter, tab, escape, up, down, ...) or
        text typed as it is. After a key, the UI gets time to take it: it
        has once it has drawn the change and then been quiet for a third of
        `pause` (at most `pause`; both scaled for emulation). Text that
        follows a key goes to the field the key moves the focus to: it is
        typed once a whole frame has the cursor (the focused input's caret)
        elsewhere than before the key, and the next key waits until a frame
        has the caret after all of it (a UI behind the keys drew the caret
        moving along the text, which is not the focus moving)."""
        for i, key in enumerate(keys):
            frames, cursor = self.term.frames, self.term.cursor
            self.child.send(KEYS.get(key, key))
            if key in KEYS:
                most, quiet = self.guest.accel.scale(pause), self.guest.accel.scale(pause / 3)
                self.settle(most, quiet)
                if i + 1 < len(keys) and keys[i + 1] not in KEYS:
                    self.focus_moved(frames, cursor)
            elif i > 0 and keys[i - 1] in KEYS:
                self.typed(key, cursor)
            else:
                self.pump(0.1)

    def _frames_needed(self) -> None:
        if not self.term.asked or self.term.frames == 0:
            raise LabError(f"{self.guest.name}: the UI never asked for synchronized output or "
                           "never drew a whole frame: the driver cannot tell where the focus is")

    def focus_moved(self, frames: int, cursor: tuple[int, int]) -> None:
        """Pump until a frame after the `frames`th leaves the cursor elsewhere
        than `cursor`, or TEXT_WAIT_S (scaled) has passed."""
        self._frames_needed()
        deadline = time.monotonic() + self.guest.accel.scale(TEXT_WAIT_S)
        while time.monotonic() < deadline:
            if self.term.frames > frames and self.term.cursor != cursor:
                return
            self.pump(0.1)

    def typed(self, text: str, caret: tuple[int, int]) -> None:
        """Pump until a whole frame has the caret len(`text`) cells right of
        `caret` (where it was before `text`); LabError after TEXT_WAIT_S
        (scaled): the text did not go where it was meant to."""
        self._frames_needed()
        want = (caret[0] + len(text), caret[1])
        deadline = time.monotonic() + self.guest.accel.scale(TEXT_WAIT_S)
        while self.term.cursor != want:
            if time.monotonic() >= deadline:
                raise LabError(f"{self.guest.name}: after typing {len(text)} characters the "
                               f"caret is at {self.term.cursor}, not {want}; the screen:\n"
                               + self.text())
            self.pump(0.1)

    def quit(self) -> None:
        self.press("escape", "escape", "escape")
        self.child.send("q")
        self.child.expect("UI-DONE", timeout=self.guest.accel.scale(60))
        self.guest.check("stty sane; true")
