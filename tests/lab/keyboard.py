"""Typing on a guest's own keyboard (the PS/2 keyboard of QEMU's q35 machine),
through QEMU's machine protocol (QMP) socket: the keys reach the foreground
virtual terminal, tty1, as a user's at the screen would. What tty1 shows is
read back from the guest's /dev/vcs1 (tests/vm/test_login.py)."""

from __future__ import annotations

import json
import socket
import string
from pathlib import Path

from tests.lab.paths import LabError

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
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(timeout)
        try:
            self.sock.connect(str(qmp))
        except OSError as err:
            raise LabError(f"keyboard: no QMP socket at {qmp}: {err}") from None
        self.file = self.sock.makefile("rwb")
        self._reply()  # the greeting
        self._command("qmp_capabilities")

    def _reply(self) -> dict:
        while True:
            line = self.file.readline()
            if not line:
                raise LabError("keyboard: QMP closed")
            message = json.loads(line)
            if "event" not in message:
                return message

    def _command(self, name: str, **arguments) -> dict:
        self.file.write(json.dumps({"execute": name, "arguments": arguments}).encode() + b"\n")
        self.file.flush()
        reply = self._reply()
        if "error" in reply:
            raise LabError(f"keyboard: {name}: {reply['error']}")
        return reply

    def type(self, text: str) -> None:
        for char in text:
            keys = [{"type": "qcode", "data": key} for key in qcodes(char)]
            self._command("send-key", keys=keys, **{"hold-time": 30})

    def close(self) -> None:
        self.file.close()
        self.sock.close()

    def __enter__(self) -> Keyboard:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
