"""A client of QEMU's machine protocol (QMP) on a guest's unix socket: one
command at a time, its reply or a LabError naming the command. Events QEMU
sends in between are skipped."""

from __future__ import annotations

import json
import socket
import time
from pathlib import Path
from typing import Any

from tests.lab.paths import LabError


class Qmp:
    def __init__(self, path: Path, timeout: float = 30, what: str = "qmp") -> None:
        self.what = what
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(timeout)
        try:
            self.sock.connect(str(path))
        except OSError as err:
            self.sock.close()
            raise LabError(f"{what}: no QMP socket at {path}: {err}") from None
        self.file = self.sock.makefile("rwb")
        self._reply()  # the greeting
        self.command("qmp_capabilities")

    @classmethod
    def connect(cls, path: Path, timeout: float, what: str = "qmp") -> Qmp:
        """Connect once QEMU has made its socket (it is started just before)."""
        end = time.monotonic() + timeout
        while True:
            try:
                return cls(path, what=what)
            except LabError:
                if time.monotonic() > end:
                    raise
                time.sleep(0.05)

    def _reply(self) -> dict:
        while True:
            line = self.file.readline()
            if not line:
                raise LabError(f"{self.what}: QMP closed")
            message = json.loads(line)
            if "event" not in message:
                return message

    def command(self, name: str, **arguments: Any) -> Any:
        """Run `name`; what it returned."""
        self.file.write(json.dumps({"execute": name, "arguments": arguments}).encode() + b"\n")
        self.file.flush()
        reply = self._reply()
        if "error" in reply:
            raise LabError(f"{self.what}: {name}: {reply['error']}")
        return reply.get("return")

    def close(self) -> None:
        self.file.close()
        self.sock.close()

    def __enter__(self) -> Qmp:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
