"""The console UI run on a guest's serial console at 80x24 (TERM=vt220: the
console profile), its output rendered by a terminal emulator (pyte)."""

from __future__ import annotations

import pyte

from tests.lab.guest import Guest


def run_ui(edge: Guest, seconds: int) -> pyte.Screen:
    child = edge.child
    edge.check("stty rows 24 cols 80")
    child.sendline(f"TERM=vt220 keel tui --seconds {seconds}; echo UI\"\"-DONE")
    child.expect("UI-DONE", timeout=edge.accel.scale(seconds + 60))
    screen = pyte.Screen(80, 24)
    stream = pyte.ByteStream(screen)
    raw = child.before
    # the UI's output starts after the echoed command line
    stream.feed(raw[raw.find(b"\n") + 1:])
    edge.check("stty sane; true")  # back in step with the shell
    return screen
