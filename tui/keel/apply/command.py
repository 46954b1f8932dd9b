"""`keel apply`, `keel confirm`, `keel rollback`: the config in force, applied
with a check first, recorded as a revision, and rolled back unless confirmed.

Exit status: 0 applied (or nothing to change), 1 the system refused a change
(nothing after the failing step ran), 2 the config is invalid (nothing changed).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from keel.apply import engine
from keel.render.model import RouterModel
from keel.state.revisions import RevisionStore, atomic_write
from keel.system.commands import CommandError, Runner
from keel.wireguard import keys

USER_CONFIG = Path("/data/keel/keel.toml")
DEFAULT_CONFIG = Path("/etc/keel/keel.toml")
PENDING = engine.RUN_DIR / "pending-confirm.json"

EXIT_OK, EXIT_REFUSED, EXIT_INVALID = 0, 1, 2


class InvalidConfig(Exception):
    """The config failed validation; the message lists every problem."""


def config_in_force() -> Path:
    return USER_CONFIG if USER_CONFIG.exists() else DEFAULT_CONFIG


def load_model(text: str, source: str) -> RouterModel:
    """Validate config text and flatten it for the renderers."""
    from keel.apply.from_config import model_from_config
    from keel.config.errors import ConfigError
    from keel.config.load import load_text

    try:
        config = load_text(text, source)
    except ConfigError as err:
        raise InvalidConfig(str(err)) from None
    return model_from_config(config)


@dataclass
class Applier:
    runner: Runner
    report: Callable[[str], None] = print
    revisions: RevisionStore = field(default_factory=RevisionStore)
    key_path: Path = keys.KEY_PATH
    run_dir: Path = engine.RUN_DIR

    def apply_text(self, text: str, source: str, *, dry_run: bool = False,
                   note: str = "apply") -> int:
        model = load_model(text, source)  # raises InvalidConfig: nothing touched
        # the key exists from the first boot on, so `keel show pubkey` can be
        # given to the peer before the tunnel is configured
        if (not dry_run and self.key_path.parent.parent.is_dir()
                and keys.ensure_private_key(self.key_path, self.runner)):
            self.report(f"wireguard: made a new private key in {self.key_path}")
        try:
            engine.check_ruleset(model, self.runner, self.run_dir)
        except CommandError as err:
            self.report(f"firewall: nft -c refused the ruleset, nothing changed:\n{err.stderr}")
            return EXIT_REFUSED
        probe = engine.Probe(self.runner, self.run_dir)
        steps = engine.plan(model, probe, self._private_key)
        if dry_run:
            if not steps:
                self.report("no changes")
            for step in steps:
                for line in step.describe():
                    self.report(line)
            return EXIT_OK
        try:
            engine.execute(steps, self.runner, self.report)
        except CommandError as err:
            self.report(f"error: {err}")
            return EXIT_REFUSED
        if not steps:
            self.report("no changes")
        current = self.revisions.current()
        if current is None or current.text() != text:
            rev = self.revisions.record(text, note)
            self.report(f"recorded revision {rev.number}")
        return EXIT_OK

    def _private_key(self) -> str:
        return self.key_path.read_text().strip()


def write_user_config(text: str, path: Path = USER_CONFIG) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, text)


# --- the commands -------------------------------------------------------------
def cmd_apply(path: Path | None, *, dry_run: bool, confirm: int | None, boot: bool) -> int:
    applier = Applier(Runner())
    if boot:
        return _apply_at_boot(applier)
    source = path or config_in_force()
    try:
        text = source.read_text()
    except OSError as err:
        print(f"keel apply: cannot read {source}: {err.strerror}", file=sys.stderr)
        return EXIT_INVALID
    previous = applier.revisions.current()
    try:
        rc = applier.apply_text(text, str(source), dry_run=dry_run)
    except InvalidConfig as err:
        print(f"keel apply: {source} is invalid, nothing changed:\n{err}", file=sys.stderr)
        return EXIT_INVALID
    if rc != EXIT_OK or dry_run:
        return rc
    if source != USER_CONFIG:
        write_user_config(text)
    if confirm:
        _arm_rollback(confirm, previous.number if previous else None)
    return rc


def _apply_at_boot(applier: Applier) -> int:
    """The config in force; if invalid, the last recorded revision; if that
    fails too, the shipped default. The router never boots unconfigured."""
    PENDING.unlink(missing_ok=True)
    candidates: list[tuple[str, Callable[[], str]]] = []
    if USER_CONFIG.exists():
        candidates.append((str(USER_CONFIG), USER_CONFIG.read_text))
    current = applier.revisions.current()
    if current is not None:
        candidates.append((f"revision {current.number}", current.text))
    candidates.append((str(DEFAULT_CONFIG), DEFAULT_CONFIG.read_text))
    for name, read in candidates:
        try:
            rc = applier.apply_text(read(), name, note="boot")
        except InvalidConfig as err:
            applier.report(f"keel: {name} is invalid, trying the next config:\n{err}")
            continue
        except OSError as err:
            applier.report(f"keel: cannot read {name}: {err}")
            continue
        if rc == EXIT_OK:
            applier.report(f"keel: applied {name}")
            return rc
    return EXIT_REFUSED


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
    applier = Applier(Runner())
    store = applier.revisions
    target = store.get(number) if number is not None else store.previous()
    if target is None:
        print("keel rollback: no earlier revision", file=sys.stderr)
        return EXIT_REFUSED
    text = target.text()
    try:
        rc = applier.apply_text(text, f"revision {target.number}",
                                note=f"{note} to {target.number}")
    except InvalidConfig as err:
        print(f"keel rollback: revision {target.number} no longer validates:\n{err}",
              file=sys.stderr)
        return EXIT_INVALID
    if rc == EXIT_OK:
        write_user_config(text)
    return rc
