"""Where every reader of the system reads from: files and commands behind one
small interface, so tests feed fixtures and the appliance reads /proc, /sys
and runs tools. The readers of each fact (keel.system.*) take a Source."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping, Sequence
from typing import Protocol


class SourceError(OSError):
    """A file could not be read or a command failed."""


class Source(Protocol):
    def read_text(self, path: str) -> str: ...

    def run(self, argv: Sequence[str]) -> str: ...

    def listdir(self, path: str) -> list[str]: ...


class RealSource:
    """The running system."""

    def __init__(self, timeout: float = 5.0) -> None:
        self.timeout = timeout

    def read_text(self, path: str) -> str:
        try:
            with open(path, encoding="utf-8", errors="replace") as f:
                return f.read()
        except OSError as exc:
            raise SourceError(exc.errno, exc.strerror, path) from None

    def run(self, argv: Sequence[str]) -> str:
        try:
            proc = subprocess.run(list(argv), capture_output=True, text=True,
                                  timeout=self.timeout, check=False)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise SourceError(f"{argv[0]}: {exc}") from None
        if proc.returncode != 0:
            raise SourceError(f"{' '.join(argv)}: {proc.stderr.strip() or proc.returncode}")
        return proc.stdout

    def listdir(self, path: str) -> list[str]:
        try:
            return os.listdir(path)
        except OSError as exc:
            raise SourceError(exc.errno, exc.strerror, path) from None


class FixtureSource:
    """Canned answers. A value may be a list: each read takes the next item and
    the last one repeats (so "before" and "after" fixtures give deltas)."""

    def __init__(self, files: Mapping[str, str | list[str]] | None = None,
                 commands: Mapping[tuple[str, ...], str | list[str]] | None = None) -> None:
        self.files = {k: list(v) if isinstance(v, list) else [v] for k, v in (files or {}).items()}
        self.commands = {tuple(k): list(v) if isinstance(v, list) else [v]
                         for k, v in (commands or {}).items()}
        self.reads: list[str] = []

    @staticmethod
    def _take(items: list[str]) -> str:
        return items.pop(0) if len(items) > 1 else items[0]

    def read_text(self, path: str) -> str:
        self.reads.append(path)
        if path not in self.files:
            raise SourceError(2, "No such file (fixture)", path)
        return self._take(self.files[path])

    def run(self, argv: Sequence[str]) -> str:
        key = tuple(argv)
        self.reads.append(" ".join(key))
        if key not in self.commands:
            raise SourceError(f"{key[0]}: no fixture for {' '.join(key)}")
        return self._take(self.commands[key])

    def listdir(self, path: str) -> list[str]:
        prefix = path.rstrip("/") + "/"
        names = {p[len(prefix):].split("/", 1)[0] for p in self.files if p.startswith(prefix)}
        if not names:
            raise SourceError(2, "No such directory (fixture)", path)
        return sorted(names)


class RunnerSource:
    """A Source over a Runner (keel.system.commands): the apply plan's probe
    reads through the same readers as the collectors, and its fake runners in
    tests see every command it runs."""

    def __init__(self, runner) -> None:  # a keel.system.commands.Runner
        self.runner = runner

    def read_text(self, path: str) -> str:
        return RealSource().read_text(path)

    def run(self, argv: Sequence[str]) -> str:
        proc = self.runner.run(list(argv), check=False)
        if proc.returncode != 0:
            raise SourceError(f"{' '.join(argv)}: {(proc.stderr or '').strip() or proc.returncode}")
        return proc.stdout

    def listdir(self, path: str) -> list[str]:
        return RealSource().listdir(path)
