"""Typing on a guest's own keyboard (the PS/2 keyboard of QEMU's q35 machine),
through QEMU's machine protocol (QMP) socket: the keys reach the foreground
virtual terminal, tty1, as a user's at the screen would. What tty1 shows is
read back from the guest's /dev/vcs1 (tests/vm/test_login.py)."""

from __future__ import annotations

import string
from pathlib import Path

from tests.lab.paths import LabError
from tests.lab.qmp import Qmp

# QEMU's QKeyCode names of the characters the tests type
_NAMED = {"\n": "ret", " ": "spc", "-": "minus", ".": "dot", "/": "slash", "=": "equal",
          ",": "comma", ";": "semicolon", "'": "apostrophe", "`": "grave_accent",
          "[": "bracket_left", "]": "bracket_right", "\\": "backslash"}
_SHIFTED = {"_": "minus", "+": "equal", ":": "semicolon", ">": "dot", "<": "comma",
            "?": "slash", '"': "apostrophe", "~": "grave_accent", "{": "bracket_left",
            "}": "bracket_right", "|": "backslash", "!": "1", "@": "2", "#": "3", "$": "4",
            "%": "5", "^": "6", "&": "7", "*": "8", "(": "9", ")": "0"}


def qcodes(char: str) -> list[str]:
    """The keys pressed together for `char` (a US layout, as the console's)."""
    if char in string.ascii_lowercase or char in string.digits:
        return [char]
    if char in string.ascii_uppercase:
        return ["shift", char.lower()]
    if char in _NAMED:
        return [_NAMED[char]]
    if char in _SHIFTED:
        return ["shift", _SHIFTED[char]]
    raise LabError(f"keyboard: no key for {char!r}")


class Keyboard:
    def __init__(self, qmp: Path, timeout: float = 30) -> None:
        self.qmp = Qmp(qmp, timeout, what="keyboard")

    def type(self, text: str) -> None:
        for char in text:
            keys = [{"type": "qcode", "data": key} for key in qcodes(char)]
            self.qmp.command("send-key", keys=keys, **{"hold-time": 30})

    def close(self) -> None:
        self.qmp.close()

    def __enter__(self) -> Keyboard:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
