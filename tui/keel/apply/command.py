"""`keel apply`, `keel confirm`, `keel rollback`: the config in force, applied
with a check first, recorded as a revision, and rolled back unless confirmed.

Exit status: 0 applied (or nothing to change), 1 the system refused a change
(nothing after the failing step ran), 2 the config is invalid (nothing changed).
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from keel.apply import boot, engine
from keel.apply.errors import InvalidConfig, Refused
from keel.boot import timeline
from keel.config.errors import ConfigError
from keel.config.load import Loaded, parse_config
from keel.model import RouterModel, nic_roles, reading
from keel.model.reading import model_of, read_loaded, read_model
from keel.state.revisions import RevisionStore, atomic_write
from keel.system import nic_record
from keel.system.commands import CommandError, CommandTimeout, Runner
from keel.system.console import uptime
from keel.wireguard import keys

USER_CONFIG = reading.USER_CONFIG
DEFAULT_CONFIG = reading.DEFAULT_CONFIG
PENDING = engine.RUN_DIR / "pending-confirm.json"

EXIT_OK, EXIT_REFUSED, EXIT_INVALID = 0, 1, 2

__all__ = ["Applier", "InvalidConfig", "Refused", "config_in_force", "read_loaded",
           "read_model"]


def config_in_force() -> Path:
    """keel.model.config_in_force over this module's paths (tests move them);
    kept here for keel.selftest.cake_bypass, which imports it from here."""
    return reading.config_in_force(USER_CONFIG, DEFAULT_CONFIG)


@dataclass
class Applier:
    runner: Runner
    report: Callable[[str], None] = print
    revisions: RevisionStore = field(default_factory=RevisionStore)
    key_path: Path = keys.KEY_PATH
    run_dir: Path = engine.RUN_DIR
    timeline_path: Path | None = None  # at boot: each step's times go there

    def apply(self, loaded: Loaded, *, dry_run: bool = False, note: str = "apply") -> int:
        """Apply a validated config: EXIT_OK, or EXIT_REFUSED (said why)."""
        try:
            self.apply_or_raise(loaded, dry_run=dry_run, note=note)
        except Refused as err:
            self.report(str(err))
            return EXIT_REFUSED
        return EXIT_OK

    def apply_text(self, text: str, source: str, *, dry_run: bool = False,
                   note: str = "apply") -> int:
        """Validate config text (raises InvalidConfig: nothing touched), then apply."""
        try:
            loaded = parse_config(text, source)
        except ConfigError as err:
            raise InvalidConfig(err) from None
        return self.apply(loaded, dry_run=dry_run, note=note)

    def apply_file(self, path: Path, source: str, *, note: str) -> None:
        """Read, validate and apply a file; raises on any failure (boot)."""
        self.apply_or_raise(read_loaded(path, source), note=note)

    def apply_or_raise(self, loaded: Loaded, *, dry_run: bool = False,
                       note: str = "apply") -> None:
        """Render, check and apply; raises Refused when the system says no."""
        began = timeline.boottime()
        for line in loaded.warning_lines():
            self.report(line)
        probe = engine.Probe(self.runner, self.run_dir)
        model = self._resolved(model_of(loaded), probe, dry_run=dry_run)
        self._ensure_key(tunnel=model.wireguard is not None, dry_run=dry_run)
        try:
            engine.check_ruleset(model, self.runner, self.run_dir)
        except CommandTimeout:
            raise  # a slow machine, not a refused ruleset (keel.apply.boot tries again)
        except CommandError as err:
            raise Refused("firewall: nft -c refused the ruleset, nothing changed:\n"
                          + err.stderr) from None
        key = self._private_key
        if dry_run and not self.key_path.is_file():
            # a dry run makes no key: the plan shows the tunnel's step (a new key
            # would be made first) without reading one
            def key() -> str:
                return "(a key to be made)"
        steps = engine.plan(model, probe, key)
        if self.timeline_path is not None:
            with contextlib.suppress(OSError):
                timeline.append(timeline.Mark("apply: key, nft -c, the system read, plan",
                                              began, timeline.boottime()),
                                self.timeline_path)
        if dry_run:
            if not steps:
                self.report("no changes")
            for step in steps:
                for line in step.describe():
                    self.report(line)
            return
        try:
            engine.execute(steps, self.runner, self.report, self._timed)
        except CommandTimeout:
            raise  # a slow machine, not a refused step (keel.apply.boot tries again)
        except CommandError as err:
            raise Refused(f"error: {err}") from None
        if not steps:
            self.report("no changes")
        self._record(loaded.text, note)

    def _resolved(self, model: RouterModel, probe: engine.Probe, *,
                  dry_run: bool) -> RouterModel:
        """The model with the kernel names of the NICs the config names
        (keel.model.nic_roles); raises Refused when the WAN is on no NIC
        here, or the WAN and the LAN are one. Records what each role
        resolved to (keel.system.nic_record) unless a dry run."""
        resolution = nic_roles.resolve_model(model, probe.ports(), probe.links())
        for note in resolution.notes:
            self.report(note)
        if resolution.refused:
            raise Refused(resolution.refused)
        if not dry_run:
            nic_record.record(resolution.roles, probe.ports(), self.run_dir,
                              self.revisions.root.parent)
        return resolution.model

    def _record(self, text: str, note: str) -> None:
        """A new revision when the text differs from the current one (compared
        as bytes: a damaged revision is simply different). What was applied
        stays applied when /data cannot take it (full, read-only)."""
        try:
            current = self.revisions.current()
            if current is None or current.path.read_bytes() != text.encode():
                rev = self.revisions.record(text, note)
                self.report(f"recorded revision {rev.number}")
        except OSError as err:
            self.report(f"revisions: cannot record this one in {self.revisions.root}: "
                        f"{err.strerror or err}")

    def _ensure_key(self, *, tunnel: bool, dry_run: bool) -> None:
        """The key exists from the first boot on, so `keel show pubkey` can be
        given to the peer before the tunnel is configured. A broken key file
        stops only a config with a tunnel."""
        if dry_run or not self.key_path.parent.parent.is_dir():
            return
        try:
            if keys.ensure_private_key(self.key_path, self.runner):
                self.report(f"wireguard: made a new private key in {self.key_path}")
        except (keys.KeyFileError, CommandError, OSError) as err:
            if tunnel:
                raise Refused(f"wireguard: {err}") from None
            self.report(f"wireguard: {err} (no tunnel in this config: carrying on)")

    def _timed(self, step: engine.Step, start: float, end: float) -> None:
        if self.timeline_path is not None:
            with contextlib.suppress(OSError):
                timeline.append(timeline.Mark(f"apply {step.component}: {step.why}",
                                              start, end), self.timeline_path)

    def _private_key(self) -> str:
        return self.key_path.read_text().strip()


def write_user_config(text: str, path: Path | None = None) -> None:
    path = path or USER_CONFIG
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, text)


# --- the commands -------------------------------------------------------------
def _console(line: str) -> None:
    """Print at boot; a console that cannot be written to stops nothing."""
    with contextlib.suppress(OSError, ValueError):
        print(line, flush=True)


def make_applier(report: Callable[[str], None] = print) -> Applier:
    """The Applier of the commands: the real system (tests replace this)."""
    return Applier(Runner(), report=report)


def _boot_log(path: Path) -> Callable[[str], None]:
    """At boot: each line on the console and in the boot's log."""
    def report(line: str) -> None:
        _console(line)
        with contextlib.suppress(OSError), path.open("a") as f:
            f.write(line + "\n")
    return report


def wait_until_told(flag: Path, every: float = 0.02) -> None:
    """Started early (S01preload) with Python and keel's modules loaded while
    the rest of the boot goes on: wait for S40keel's word (the flag file)."""
    while not flag.exists():
        time.sleep(every)


def cmd_apply(path: Path | None, *, dry_run: bool, confirm: int | None, boot: bool,
              note: str = "apply", when_told: Path | None = None,
              started_at: float | None = None) -> int:
    if boot:
        applier = make_applier(_boot_log(engine.RUN_DIR / "boot-apply.log"))
        marks = applier.run_dir / timeline.TIMELINE.name
        # from the process's start (or the init script's) to here: Python and
        # keel's imports
        with contextlib.suppress(OSError):
            timeline.append(timeline.Mark("keel apply --boot: python, imports", started_at,
                                          timeline.boottime()), marks)
        if when_told is not None:  # /data and the NICs come before the word (the
            # applier made above has touched neither)
            ready = timeline.boottime()
            wait_until_told(when_told)
            with contextlib.suppress(OSError):
                timeline.append(timeline.Mark("keel apply --boot: ready, until S40keel",
                                              ready, timeline.boottime()), marks)
        applier.timeline_path = marks
        return _apply_at_boot(applier)
    applier = make_applier()
    source = path or config_in_force()
    try:
        loaded = read_loaded(source)
    except InvalidConfig as err:
        print(f"keel apply: {source} is invalid, nothing changed:\n{err}", file=sys.stderr)
        return EXIT_INVALID
    previous = applier.revisions.current()
    rc = applier.apply(loaded, dry_run=dry_run, note=note)
    if rc != EXIT_OK or dry_run:
        return rc
    if source != USER_CONFIG:
        write_user_config(loaded.text)
    if confirm:
        _arm_rollback(confirm, previous.number if previous else None)
    return rc


def _apply_at_boot(applier: Applier, user: Path | None = None,
                   default: Path | None = None) -> int:
    """The user's config; if it fails in any way, the last recorded
    revision; then the shipped default (keel.apply.boot). The router never
    boots unconfigured while one of them can be applied."""
    (applier.run_dir / PENDING.name).unlink(missing_ok=True)
    record = boot.apply_at_boot(applier, user or USER_CONFIG, default or DEFAULT_CONFIG,
                                applier.report, clock=uptime)
    return EXIT_OK if record.applied is not None else EXIT_REFUSED


def _arm_rollback(seconds: int, previous: int | None) -> None:
    deadline = time.time() + seconds
    PENDING.parent.mkdir(parents=True, exist_ok=True)
    PENDING.write_text(json.dumps({"deadline": deadline, "previous": previous}))
    subprocess.Popen([sys.executable, "-m", "keel.cli", "confirm-watch"],
                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                     stderr=subprocess.DEVNULL, start_new_session=True)
    print(f"applied; rolls back to revision {previous} in {seconds} s "
          f"unless `keel confirm` comes first")


def cmd_confirm() -> int:
    if not PENDING.exists():
        print("nothing to confirm")
        return EXIT_OK
    PENDING.unlink()
    print("confirmed")
    return EXIT_OK


def cmd_confirm_watch() -> int:
    """(internal) wait for the confirm deadline; roll back if it passes."""
    while True:
        try:
            pending = json.loads(PENDING.read_text())
        except (OSError, ValueError):
            return EXIT_OK  # confirmed, or a reboot cleared /run
        remaining = pending["deadline"] - time.time()
        if remaining <= 0:
            break
        time.sleep(min(remaining, 1.0))
    PENDING.unlink(missing_ok=True)
    if pending.get("previous") is None:
        return EXIT_OK
    return cmd_rollback(pending["previous"], note="rollback: not confirmed in time")


def cmd_rollback(number: int | None, note: str = "rollback") -> int:
    applier = make_applier()
    store = applier.revisions
    target = store.get(number) if number is not None else store.previous()
    if target is None:
        print("keel rollback: no earlier revision", file=sys.stderr)
        return EXIT_REFUSED
    try:
        loaded = read_loaded(target.path, f"revision {target.number}")
    except InvalidConfig as err:
        print(f"keel rollback: revision {target.number} no longer validates:\n{err}",
              file=sys.stderr)
        return EXIT_INVALID
    rc = applier.apply(loaded, note=f"{note} to {target.number}")
    if rc == EXIT_OK:
        write_user_config(loaded.text)
    return rc
