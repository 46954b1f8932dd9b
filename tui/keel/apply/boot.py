"""`keel apply --boot`: the router never comes up unconfigured.

The candidates, in order: the user's config (/data/keel/keel.toml), the last
recorded revision, the shipped default (/etc/keel/keel.toml). Whatever goes
wrong with one (it cannot be read, is not UTF-8, not TOML, invalid, or
rendering, checking or applying it fails in any way) is said in one line on
the console and the next one is tried. What happened is kept in
/run/keel/boot-fallback.json for `keel doctor`."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Protocol

from keel.apply.errors import InvalidConfig, Refused
from keel.config.errors import ConfigError
from keel.state.revisions import RevisionStore, atomic_write
from keel.system.commands import CommandError

RECORD_NAME = "boot-fallback.json"
MAX_REASON = 300  # characters of an unexpected error's message


class BootApplier(Protocol):
    revisions: RevisionStore
    run_dir: Path

    def apply_file(self, path: Path, source: str, *, note: str) -> None: ...


@dataclass(frozen=True)
class Candidate:
    name: str  # how messages name it: a path, or "revision N"
    path: Path


@dataclass(frozen=True)
class Failure:
    source: str
    reason: str


@dataclass(frozen=True)
class BootRecord:
    """What the last `keel apply --boot` did: the config it applied (None:
    none could be), and why the ones before it failed."""

    applied: str | None
    failures: tuple[Failure, ...] = ()
    at: float = field(default_factory=time.time)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def reason_of(err: BaseException) -> str:
    """One line: why a candidate failed, for the console and the doctor."""
    if isinstance(err, (ConfigError, InvalidConfig)):
        return err.summary()
    if isinstance(err, CommandError):
        text = f"`{' '.join(err.argv)}` failed ({err.rc}): {err.stderr}"
    elif isinstance(err, Refused):
        text = str(err)
    else:
        text = f"{type(err).__name__}: {err}"
    text = " ".join(text.split())  # one line
    return text if len(text) <= MAX_REASON else text[:MAX_REASON - 3] + "..."


def candidates(user: Path, default: Path, revisions: RevisionStore,
               failures: list[Failure]) -> list[Candidate]:
    out = []
    if user.exists():
        out.append(Candidate(str(user), user))
    try:
        current = revisions.current()
    except Exception as err:  # a broken store must not stop the boot
        failures.append(Failure("the last recorded revision", reason_of(err)))
        current = None
    if current is not None:
        out.append(Candidate(f"revision {current.number}", current.path))
    out.append(Candidate(str(default), default))
    return out


def write_record(run_dir: Path, record: BootRecord) -> None:
    run_dir.mkdir(parents=True, exist_ok=True)
    atomic_write(run_dir / RECORD_NAME, json.dumps(record.as_dict()) + "\n")


def read_record(run_dir: Path) -> BootRecord | None:
    """The record of the last boot apply, or None (none, or unreadable)."""
    try:
        data = json.loads((run_dir / RECORD_NAME).read_text())
        failures = tuple(Failure(str(f["source"]), str(f["reason"]))
                         for f in data.get("failures", []))
        applied = data.get("applied")
        return BootRecord(None if applied is None else str(applied), failures,
                          float(data.get("at", 0)))
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        return None


def apply_at_boot(applier: BootApplier, user: Path, default: Path,
                  say: Callable[[str], None]) -> BootRecord:
    """Apply the first candidate that works; the record of what happened."""
    failures: list[Failure] = []
    chain = candidates(user, default, applier.revisions, failures)
    record = BootRecord(None, ())
    for n, candidate in enumerate(chain):
        try:
            applier.apply_file(candidate.path, candidate.name, note="boot")
        except Exception as err:  # whatever it is, the next config is tried
            failure = Failure(candidate.name, reason_of(err))
            failures.append(failure)
            then = f"trying {chain[n + 1].name}" if n + 1 < len(chain) else "nothing left to try"
            say(f"keel: {candidate.name} failed: {failure.reason}; {then}")
            continue
        record = BootRecord(candidate.name, tuple(failures))
        break
    else:
        record = BootRecord(None, tuple(failures))
    if record.applied is None:
        say("keel: no config could be applied: the router is NOT configured")
    elif failures:
        say(f"keel: applied {record.applied} (fallback; `keel doctor` says why)")
    else:
        say(f"keel: applied {record.applied}")
    try:
        write_record(applier.run_dir, record)
    except OSError as err:
        say(f"keel: cannot keep the boot record in {applier.run_dir}: {err.strerror}")
    return record
