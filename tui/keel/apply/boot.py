"""`keel apply --boot`: the router never comes up unconfigured.

The candidates, in order: the user's config (/data/keel/keel.toml); the
revision in force (`current`), then the earlier revisions, newest first; the
shipped default (/etc/keel/keel.toml). Whatever goes wrong with one (it cannot
be read, is not UTF-8, not TOML, invalid, or rendering, checking or applying it
fails in any way) is said in one line on the console and the next one is
tried. What happened is kept in /run/keel/boot-fallback.json for `keel doctor`.

The earlier revisions are there for a rollback to an older keel: the user's
config and the current revision may then both carry keys that only the newer
version knows, while an older revision this version can read is still on
/data. At most MAX_REVISIONS revisions are tried (the current one counts); a
revision whose text is the same, byte for byte, as one already tried (the
user's config or another revision) is skipped, as it would fail the same way.
The revision store is only read when the user's config failed; a store that
cannot be read, or a revision that cannot, is one failure line and the boot
goes on to the next candidate.

What is applied is recorded as the applier records every apply: a new revision
when its text differs from the current one (so the current revision, or the
user's config when it is the current revision's text, adds none). An earlier
revision applied at boot thus becomes a new current revision (noted "boot:
fell back to revision N"), as `keel rollback` does: `current` says what is in
force, the next boot tries it first, and no revision is removed or rewritten,
so the newer ones are still there after an upgrade back. The user's config is
never written at boot: the newer keel reads it again after that upgrade.

A fallback never widens access: the config applied after one that failed is
first cut down to what the failed (newer) ones allow (keel.apply.narrow), and
the console and the record say what was cut."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, Protocol

from keel.apply import narrow
from keel.apply.errors import InvalidConfig, Refused
from keel.config.dump import to_toml
from keel.config.errors import ConfigError
from keel.config.load import parse_config
from keel.state.revisions import RevisionStore, atomic_write
from keel.system.commands import CommandError, CommandTimeout

RECORD_NAME = "boot-fallback.json"
NARROWED_NAME = "boot-narrowed.toml"  # in the run dir: a fallback, cut down
MAX_REASON = 300  # characters of an unexpected error's message
MAX_REVISIONS = 10  # revisions tried at boot, the current one included


class BootApplier(Protocol):
    revisions: RevisionStore
    run_dir: Path

    def apply_file(self, path: Path, source: str, *, note: str) -> None: ...


@dataclass(frozen=True)
class Candidate:
    name: str  # how messages name it: a path, or "revision N"
    path: Path
    note: str = "boot"  # the note of the revision recorded if it is applied
    in_force: bool = False  # the revision in force before this boot


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
    # seconds of uptime when the apply ended (None: not known, a record an
    # older keel wrote): the upgrade gate counts the tunnel's wait from here
    uptime: float | None = None
    # what the fallback applied had cut out, not to widen access (one short
    # line each: keel.apply.narrow)
    narrowed: tuple[str, ...] = ()

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


def _new(path: Path, tried: set[bytes]) -> bool:
    """Whether a text has not been tried yet (then it is, from now on); a
    file that cannot be read is tried: applying it says why it fails."""
    try:
        text = path.read_bytes()
    except Exception:  # the apply says why, in its failure line
        return True
    if text in tried:
        return False
    tried.add(text)
    return True


def candidates(user: Path, default: Path, revisions: RevisionStore
               ) -> Iterator[Candidate | Failure]:
    """The configs to try, in order, each looked at when the one before it
    failed; a Failure stands for what failed before it could be tried (the
    revision store). Never raises."""
    tried: set[bytes] = set()
    try:
        present = user.exists()
    except OSError:  # /data/keel not searchable: applying it says so
        present = True
    if present:
        _new(user, tried)
        yield Candidate(str(user), user)
    yield from _revisions(revisions, tried)
    yield Candidate(str(default), default)


def _revisions(revisions: RevisionStore, tried: set[bytes]
               ) -> Iterator[Candidate | Failure]:
    """The current revision, then the earlier ones newest first: at most
    MAX_REVISIONS of them, none with a text already tried."""
    left = MAX_REVISIONS
    broken = False
    try:
        current = revisions.current()
    except Exception as err:  # a broken store must not stop the boot
        yield Failure("the last recorded revision", reason_of(err))
        current, broken = None, True
    if current is not None and _new(current.path, tried):
        left -= 1
        yield Candidate(f"revision {current.number}", current.path, in_force=True)
    try:
        earlier = [rev for rev in reversed(revisions.list())
                   if current is None or rev.number < current.number]
    except Exception as err:
        if not broken:  # said once: current() reads the list too
            yield Failure("the earlier revisions", reason_of(err))
        earlier = []
    for rev in earlier:
        if left == 0:
            return
        if _new(rev.path, tried):
            left -= 1
            yield Candidate(f"revision {rev.number}", rev.path,
                            f"boot: fell back to revision {rev.number}")


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
        ended = data.get("uptime")
        narrowed = tuple(str(x) for x in data.get("narrowed", ()))
        return BootRecord(None if applied is None else str(applied), failures,
                          float(data.get("at", 0)), None if ended is None else float(ended),
                          narrowed)
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        return None


def _named(item: Candidate | Failure) -> str:
    return item.name if isinstance(item, Candidate) else item.source


def _text(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError):
        return None


def narrowed(item: Candidate, newer: list[str], run_dir: Path) -> tuple[Path, tuple[str, ...]]:
    """The file to apply for a fallback `item`: itself, or a copy in the
    run dir with no more access than the `newer` configs that failed allow;
    and what the copy cut out. A config that cannot be read or is invalid is
    applied as it is (its apply fails and says why)."""
    text = _text(item.path)
    if text is None:
        return item.path, ()
    try:
        config = parse_config(text, item.name).config
    except (ConfigError, InvalidConfig):
        return item.path, ()
    ceiling = narrow.ceiling_over(newer)
    if ceiling is None:  # no newer config is readable
        if item.in_force:
            return item.path, ()
        ceiling = narrow.CLOSED
    config, cut = narrow.narrow(config, ceiling)
    if not cut:
        return item.path, ()
    run_dir.mkdir(parents=True, exist_ok=True)
    out = run_dir / NARROWED_NAME
    atomic_write(out, to_toml(config))
    return out, cut


# how often a config whose commands ran out of time is tried before the next
# candidate: a command that times out says the machine is slow (a starved
# VPS at boot), not that the config is wrong
TIMEOUT_TRIES = 3


def _apply_patiently(applier: BootApplier, path: Path, name: str, note: str,
                     say: Callable[[str], None]) -> None:
    """apply_file, tried again (at most TIMEOUT_TRIES times in all) while a
    command it runs times out; any other failure, or the last timeout, is raised."""
    for attempt in range(1, TIMEOUT_TRIES + 1):
        try:
            applier.apply_file(path, name, note=note)
            return
        except CommandTimeout as err:
            if attempt == TIMEOUT_TRIES:
                raise
            say(f"keel: {name}: `{' '.join(err.argv)}` took more than {err.timeout:.0f} s: "
                "this machine is slow, not the config wrong; trying it again")


def apply_at_boot(applier: BootApplier, user: Path, default: Path,
                  say: Callable[[str], None],
                  clock: Callable[[], float] | None = None) -> BootRecord:
    """Apply the first candidate that works; the record of what happened
    (`clock`: seconds of uptime, read when it ended)."""
    failures: list[Failure] = []
    newer: list[str] = []  # the texts of the configs that failed, newest first
    chain = candidates(user, default, applier.revisions)
    record = BootRecord(None, ())
    item = next(chain, None)
    while item is not None:
        if isinstance(item, Failure):
            failure = item
        else:
            path, cut = item.path, ()
            if failures:
                path, cut = narrowed(item, newer, applier.run_dir)
            if cut:
                say(f"keel: {item.name}: access cut to what the newer config allows: "
                    + ", ".join(cut))
            try:
                _apply_patiently(applier, path, item.name, item.note, say)
            except Exception as err:  # whatever it is, the next config is tried
                failure = Failure(item.name, reason_of(err))
                if (text := _text(item.path)) is not None:
                    newer.append(text)
            else:
                record = BootRecord(item.name, tuple(failures), narrowed=cut)
                break
        failures.append(failure)
        item = next(chain, None)
        then = "nothing left to try" if item is None else f"trying {_named(item)}"
        say(f"keel: {failure.source} failed: {failure.reason}; {then}")
    else:
        record = BootRecord(None, tuple(failures))
    if record.applied is None:
        say("keel: no config could be applied: the router is NOT configured")
    elif failures:
        say(f"keel: applied {record.applied} (fallback; `keel doctor` says why)")
    else:
        say(f"keel: applied {record.applied}")
    if clock is not None:
        record = replace(record, uptime=clock())
    try:
        write_record(applier.run_dir, record)
    except OSError as err:
        say(f"keel: cannot keep the boot record in {applier.run_dir}: {err.strerror}")
    return record
