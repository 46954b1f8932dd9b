"""Running the router's tools (ip, tc, nft, wg, ...).

A Runner runs argv lists, never shell strings. Input given on stdin (a
ruleset, a key) is never logged: only the argv is, and callers must not put a
secret in an argv.
"""

from __future__ import annotations

import logging
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass, field

log = logging.getLogger("keel.commands")


class CommandError(RuntimeError):
    def __init__(self, argv: Sequence[str], rc: int, stderr: str) -> None:
        self.argv = list(argv)
        self.rc = rc
        self.stderr = stderr.strip()
        super().__init__(f"`{' '.join(argv)}` failed ({rc}): {self.stderr}")


class CommandTimeout(CommandError):
    """A command ran past its timeout: the machine was slow, which says
    nothing about what the command was asked (keel.apply.boot tries again)."""

    def __init__(self, argv: Sequence[str], timeout: float) -> None:
        self.timeout = timeout
        super().__init__(argv, -1, f"took more than {timeout:.0f} s")


@dataclass
class Runner:
    """Runs commands for real; keeps the list of what it ran."""

    ran: list[list[str]] = field(default_factory=list)

    def run(self, argv: Sequence[str], *, input: str | None = None, check: bool = True,
            timeout: float = 30) -> subprocess.CompletedProcess[str]:
        self.ran.append(list(argv))
        log.debug("run %s", " ".join(argv))
        try:
            proc = subprocess.run(list(argv), input=input, capture_output=True, text=True,
                                  timeout=timeout, check=False)
        except FileNotFoundError:
            raise CommandError(argv, 127, f"{argv[0]}: command not found") from None
        except subprocess.TimeoutExpired:
            raise CommandTimeout(argv, timeout) from None
        if check and proc.returncode != 0:
            raise CommandError(argv, proc.returncode, proc.stderr)
        return proc

    def start(self, argv: Sequence[str]) -> None:
        """Start a daemon that stays in the foreground, detached (its own
        session, no stdin/stdout/stderr), and do not wait for it."""
        self.ran.append(list(argv))
        log.debug("start %s", " ".join(argv))
        try:
            subprocess.Popen(list(argv), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL, start_new_session=True)
        except FileNotFoundError:
            raise CommandError(argv, 127, f"{argv[0]}: command not found") from None

    def output(self, argv: Sequence[str], **kwargs) -> str:
        return self.run(argv, **kwargs).stdout
