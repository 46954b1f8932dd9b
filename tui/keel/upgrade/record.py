"""What keel keeps about upgrades on /data (never on a slot, so both slots'
versions read it): the trial in progress, and how the last one ended.

  /data/keel/upgrade/pending.json   written by `keel upgrade` before the reboot
  /data/keel/upgrade/last.json      the last outcome, for status, doctor and UI
  /data/keel/upgrade/versions.json  the version each slot ran at its last boot
  /data/keel/upgrade/install.json   an install under way: written before
                                    `rauc install` starts, removed when it ends
                                    (its failure goes to last.json); found from
                                    an earlier boot or a process gone, it was cut
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from keel.state.revisions import atomic_write
from keel.thresholds import UPGRADE_HANDSHAKE_WAIT_RANGE_S, UPGRADE_HANDSHAKE_WAIT_S

T = TypeVar("T")

DIR = Path("/data/keel/upgrade")
PENDING = "pending.json"
LAST = "last.json"
# the `at` of the last outcome the console UI has shown and the user closed
NOTICE_SEEN = "notice-seen.json"
VERSIONS = "versions.json"
INSTALL = "install.json"
MAX_TEXT = 200
# Outcome.result of an install that never finished: RAUC failed, or the
# install was cut (power, reset, killed); the slot it wrote holds no keel
INSTALL_FAILED, INSTALL_CUT = "install failed", "install cut"


def _text(value: Any, name: str) -> str:
    if not isinstance(value, str) or len(value) > MAX_TEXT:
        raise ValueError(f"{name} is not a short string")
    return value


@dataclass(frozen=True)
class Pending:
    """An install into `to_slot` waiting for its first healthy boot."""

    from_slot: str
    to_slot: str
    from_version: str
    to_version: str
    # peers with a session before the upgrade: (public key, name to show)
    peers: tuple[tuple[str, str], ...]
    at: float = field(default_factory=time.time)
    # seconds the new slot has to bring those peers back (keel upgrade --tunnel-wait)
    tunnel_wait: int = UPGRADE_HANDSHAKE_WAIT_S

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Pending:
        peers = data.get("peers", [])
        if not isinstance(peers, list) or len(peers) > 256:
            raise ValueError("peers is not a list")
        if not all(isinstance(p, list) and len(p) == 2 for p in peers):
            raise ValueError("a peer is not [key, name]")
        return cls(_text(data["from_slot"], "from_slot"), _text(data["to_slot"], "to_slot"),
                   _text(data["from_version"], "from_version"),
                   _text(data["to_version"], "to_version"),
                   tuple((_text(p[0], "a peer's key"), _text(p[1], "a peer's name"))
                         for p in peers), float(data.get("at", 0)),
                   check_tunnel_wait(data.get("tunnel_wait", UPGRADE_HANDSHAKE_WAIT_S)))


def check_tunnel_wait(value: Any) -> int:
    """A wait for the peers' handshakes in seconds, within
    UPGRADE_HANDSHAKE_WAIT_RANGE_S; ValueError names what is wrong."""
    low, high = UPGRADE_HANDSHAKE_WAIT_RANGE_S
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ValueError(f"the tunnel wait must be whole seconds from {low} to {high}")
    return value


@dataclass(frozen=True)
class Outcome:
    """How the last upgrade (or rollback) ended, in one line for people."""

    # "kept", "rolled back", "rollback" (asked for by the user), or
    # INSTALL_FAILED / INSTALL_CUT (slot: the one written, now unusable)
    result: str
    slot: str  # the slot running after it (an install's: the slot it wrote)
    version: str  # the version tried (kept or rolled back), or rolled back to
    reason: str = ""
    at: float = field(default_factory=time.time)

    @property
    def install_broke(self) -> bool:
        """An install that never finished: its slot holds no usable keel."""
        return self.result in (INSTALL_FAILED, INSTALL_CUT)

    def line(self) -> str:
        if self.install_broke:
            how = "failed" if self.result == INSTALL_FAILED else "was cut"
            why = f": {self.reason}" if self.reason else ""
            return (f"install of {self.version} into slot {self.slot} {how} at "
                    f"{when(self.at)}{why}; slot {self.slot} holds no usable keel")
        if self.result == "kept":
            return f"upgrade to {self.version} kept (slot {self.slot})"
        if self.result == "rolled back":
            return f"upgrade to {self.version} rolled back: {self.reason}"
        return f"rolled back to {self.version} (slot {self.slot}) on request"

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Outcome:
        return cls(_text(data["result"], "result"), _text(data["slot"], "slot"),
                   _text(data["version"], "version"), _text(data.get("reason", ""), "reason"),
                   float(data.get("at", 0)))


def when(at: float) -> str:
    """A record's time for people: UTC, to the second."""
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(at))


@dataclass(frozen=True)
class Installing:
    """An install under way: what `rauc install` writes into `to_slot`, and
    which process on which boot runs it (to tell a cut one from a live one)."""

    from_slot: str
    to_slot: str
    to_version: str
    boot_id: str  # /proc/sys/kernel/random/boot_id of the boot it ran on
    pid: int
    at: float = field(default_factory=time.time)

    def cut(self, boot_id: str, alive: Callable[[int], bool]) -> Outcome | None:
        """Its outcome when it can no longer be running (an earlier boot, or
        its process gone): cut; None while it may still run."""
        if boot_id == self.boot_id and alive(self.pid):
            return None
        reason = ("the router restarted during it" if boot_id != self.boot_id
                  else "keel upgrade stopped during it")
        return Outcome(INSTALL_CUT, self.to_slot, self.to_version, reason, self.at)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Installing:
        pid = data["pid"]
        if isinstance(pid, bool) or not isinstance(pid, int) or not 0 < pid < 1 << 22:
            raise ValueError("pid is not a process id")
        return cls(_text(data["from_slot"], "from_slot"), _text(data["to_slot"], "to_slot"),
                   _text(data["to_version"], "to_version"), _text(data["boot_id"], "boot_id"),
                   pid, float(data["at"]))


class Records:
    def __init__(self, directory: Path = DIR) -> None:
        self.dir = directory

    def _read(self, name: str) -> dict[str, Any] | None:
        try:
            data = json.loads((self.dir / name).read_text())
        except (OSError, ValueError, RecursionError):
            return None
        return data if isinstance(data, dict) else None

    def _load(self, name: str, from_dict: Callable[[dict[str, Any]], T]) -> T | None:
        """A record read and checked; None when absent, unreadable or malformed."""
        data = self._read(name)
        try:
            return None if data is None else from_dict(data)
        except (KeyError, ValueError, TypeError, OverflowError):
            return None

    def _write(self, name: str, data: dict[str, Any]) -> None:
        self.dir.mkdir(parents=True, exist_ok=True)
        atomic_write(self.dir / name, json.dumps(data) + "\n")

    def pending(self) -> Pending | None:
        return self._load(PENDING, Pending.from_dict)

    def set_pending(self, pending: Pending) -> None:
        self._write(PENDING, asdict(pending))

    def clear_pending(self) -> None:
        (self.dir / PENDING).unlink(missing_ok=True)

    def last(self) -> Outcome | None:
        return self._load(LAST, Outcome.from_dict)

    def set_last(self, outcome: Outcome) -> None:
        self._write(LAST, asdict(outcome))

    def notice(self) -> Outcome | None:
        """The last outcome the console must show after the boot (an upgrade
        rolled back, an install that failed or was cut) until the user has
        closed it once; None otherwise."""
        last = self.last()
        if last is None or not (last.result == "rolled back" or last.install_broke):
            return None
        seen = self._read(NOTICE_SEEN) or {}
        try:
            if float(seen.get("at", -1)) >= last.at:
                return None
        except (TypeError, ValueError):
            pass
        return last

    def notice_seen(self, outcome: Outcome) -> None:
        self._write(NOTICE_SEEN, {"at": outcome.at})

    def installing(self) -> Installing | None:
        return self._load(INSTALL, Installing.from_dict)

    def set_installing(self, installing: Installing) -> None:
        self._write(INSTALL, asdict(installing))

    def clear_installing(self) -> None:
        (self.dir / INSTALL).unlink(missing_ok=True)

    def versions(self) -> dict[str, str]:
        """The version each slot ran when it last booted (the slot as
        flashed has no bundle for RAUC to remember)."""
        data = self._read(VERSIONS) or {}
        return {k: v for k, v in data.items()
                if k in ("A", "B") and isinstance(v, str) and len(v) <= MAX_TEXT}

    def note_version(self, slot: str, version: str) -> None:
        known = self.versions()
        if known.get(slot) != version:
            self._write(VERSIONS, {**known, slot: version})
