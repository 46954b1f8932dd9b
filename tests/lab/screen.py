"""The console UI run on a guest's serial console at 80x24 (TERM=vt220: the
console profile), its output rendered by a terminal emulator (pyte)."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable

import pexpect
import pyte

from tests.lab.guest import Guest
from tests.lab.paths import LabError

DONE = b"UI-DONE"  # echoed by the shell once `keel tui` has ended


def run_ui(edge: Guest, seconds: int,
           done: Callable[[pyte.Screen], bool] | None = None) -> pyte.Screen:
    """`keel tui --seconds SECONDS` on the serial console: the screen as the
    UI left it. With `done`, the UI is quit ([q]) once done(screen) holds, as
    the screen is drawn: SECONDS only bounds it (a UI on a loaded emulated
    guest takes 20 s and more to draw its first figures)."""
    child = edge.child
    edge.check("stty rows 24 cols 80")
    child.sendline(f"TERM=vt220 keel tui --seconds {seconds}; echo UI\"\"-DONE")
    screen = pyte.Screen(80, 24)
    stream = pyte.ByteStream(screen)
    end = time.monotonic() + edge.accel.scale(seconds + 60)
    raw, fed, quitting = b"", -1, False
    while DONE not in raw[max(0, fed):]:
        if time.monotonic() > end:
            raise LabError(f"{edge.name}: keel tui did not end within its {seconds} s and a "
                           "minute; the screen:\n" + "\n".join(screen.display))
        with contextlib.suppress(pexpect.TIMEOUT):
            raw += child.read_nonblocking(65536, timeout=1)
        if fed < 0 and b"\n" in raw:
            fed = raw.index(b"\n") + 1  # the UI's output starts after the echoed command
        if fed < 0:
            continue
        # fed up to the marker, or to where a marker cut by this read could begin
        # (a read that ended inside "UI-DONE" hid it for good once fed past)
        upto = raw.find(DONE, fed)
        stop = upto if upto >= 0 else max(fed, len(raw) - len(DONE) + 1)
        stream.feed(raw[fed:stop])
        fed = stop
        if done is not None and not quitting and done(screen):
            child.send("q")
            quitting = True
    edge.check("stty sane; true")  # back in step with the shell
    return screen
