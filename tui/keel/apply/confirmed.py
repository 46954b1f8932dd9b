"""Applying a changed config with confirm, from a program: the config is
checked, written to /run/keel, and applied by `keel apply --confirm`, which
rolls back by itself unless `keel confirm` follows. The console UI's [a]
(rates), its settings screens and `keel pair` all go this one way."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from keel.config.dump import to_toml
from keel.config.load import parse_config
from keel.config.schema import Config

CONFIRM_SECONDS = 120
KEEL = (sys.executable, "-m", "keel.cli")

Run = Callable[[list[str]], subprocess.CompletedProcess]


def _run(argv: list[str]) -> subprocess.CompletedProcess:
    return subprocess.run(argv, capture_output=True, text=True, check=False)


def last_line(proc: subprocess.CompletedProcess) -> str:
    lines = (proc.stderr or proc.stdout or "").strip().splitlines()
    return lines[-1] if lines else f"exit {proc.returncode}"


def apply_with_confirm(config: Config, proposed: Path, *, note: str = "apply",
                       confirm_s: int = CONFIRM_SECONDS,
                       run: Run = _run) -> tuple[bool, str]:
    """Write `config` to `proposed` and apply it with confirm: (applied?, the
    last line apply said). The text is checked with the loader first (raises
    keel.config.errors.ConfigError: nothing written, nothing applied)."""
    text = to_toml(config)
    parse_config(text, str(proposed))
    proposed.parent.mkdir(parents=True, exist_ok=True)
    proposed.write_text(text)
    proc = run([*KEEL, "apply", "--confirm", str(confirm_s), "--note", note, str(proposed)])
    return proc.returncode == 0, last_line(proc)


def confirm(run: Run = _run) -> str:
    """`keel confirm`: keep what apply --confirm applied."""
    proc = run([*KEEL, "confirm"])
    return (proc.stdout or "").strip() or last_line(proc)
