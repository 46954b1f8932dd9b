"""Numbered revisions of the applied config, kept on /data/keel/revisions/.

Each `keel apply` that changes something records the config text it applied as
NNNN.toml; `current` names the revision in force. `rollback [N]` re-applies an
older one (as a new revision, so history is never rewritten).
"""

from __future__ import annotations

import json
import os
import re
import time
from dataclasses import dataclass
from pathlib import Path

REVISIONS = Path("/data/keel/revisions")
_NAME = re.compile(r"^(\d{4,})\.toml$")
KEEP = 50


@dataclass(frozen=True)
class Revision:
    number: int
    path: Path
    applied_at: float
    note: str

    def text(self) -> str:
        return self.path.read_text()


def atomic_write(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


class RevisionStore:
    def __init__(self, root: Path = REVISIONS) -> None:
        self.root = root

    def list(self) -> list[Revision]:
        revs = []
        if not self.root.is_dir():
            return revs
        for path in self.root.iterdir():
            m = _NAME.match(path.name)
            if m:
                meta = self._meta(path)
                revs.append(Revision(int(m[1]), path, meta.get("applied_at", 0.0),
                                     meta.get("note", "")))
        return sorted(revs, key=lambda r: r.number)

    def _meta(self, path: Path) -> dict:
        try:
            return json.loads(path.with_suffix(".json").read_text())
        except (OSError, ValueError):
            return {}

    def get(self, number: int) -> Revision:
        for rev in self.list():
            if rev.number == number:
                return rev
        raise LookupError(f"no revision {number} in {self.root}")

    def current(self) -> Revision | None:
        try:
            number = int((self.root / "current").read_text().strip())
        except (OSError, ValueError):
            return None
        try:
            return self.get(number)
        except LookupError:
            return None

    def current_number(self) -> int | None:
        """The number of the revision in force; None when there is none yet or
        the store cannot be read (the console shows it beside a change)."""
        try:
            current = self.current()
        except OSError:
            return None
        return current.number if current else None

    def previous(self) -> Revision | None:
        """The revision in force before the current one."""
        cur = self.current()
        older = [r for r in self.list() if cur is None or r.number < cur.number]
        return older[-1] if older else None

    def record(self, text: str, note: str) -> Revision:
        self.root.mkdir(parents=True, exist_ok=True)
        revs = self.list()
        number = revs[-1].number + 1 if revs else 1
        path = self.root / f"{number:04d}.toml"
        atomic_write(path, text)
        atomic_write(path.with_suffix(".json"),
                      json.dumps({"applied_at": time.time(), "note": note}))
        self.set_current(number)
        for old in revs[:-KEEP]:
            old.path.unlink(missing_ok=True)
            old.path.with_suffix(".json").unlink(missing_ok=True)
        return self.get(number)

    def set_current(self, number: int) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        atomic_write(self.root / "current", f"{number}\n")
