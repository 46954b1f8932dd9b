"""Applying measured CAKE rates: the config in force with wan.shaping's two
rates changed, applied by `keel apply --confirm` (it rolls back by itself
unless `keel confirm` follows). What the console UI's [a] key does."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from keel.config.dump import to_toml
from keel.config.load import parse_config
from keel.config.schema import Config
from keel.model.reading import config_in_force, read_loaded

CONFIRM_SECONDS = 120
PROPOSED = Path("/run/keel/proposed-rates.toml")
KEEL = (sys.executable, "-m", "keel.cli")

Run = Callable[[list[str]], subprocess.CompletedProcess]


def _run(argv: list[str]) -> subprocess.CompletedProcess:
    return subprocess.run(argv, capture_output=True, text=True, check=False)


def with_rates(config: Config, upload_kbit: int, download_kbit: int) -> Config:
    shaping = dataclasses.replace(config.wan.shaping, upload_kbit=upload_kbit,
                                  download_kbit=download_kbit)
    return dataclasses.replace(config, wan=dataclasses.replace(config.wan, shaping=shaping))


def _last_line(proc: subprocess.CompletedProcess) -> str:
    lines = (proc.stderr or proc.stdout or "").strip().splitlines()
    return lines[-1] if lines else f"exit {proc.returncode}"


def apply_rates(upload_kbit: int, download_kbit: int, *, source: Path | None = None,
                proposed: Path = PROPOSED, confirm_s: int = CONFIRM_SECONDS,
                run: Run = _run) -> tuple[bool, str]:
    """Apply the config in force with these rates, with confirm. (applied?, what to say)."""
    loaded = read_loaded(source or config_in_force())  # raises InvalidConfig
    text = to_toml(with_rates(loaded.config, upload_kbit, download_kbit))
    parse_config(text, str(proposed))  # the rates are within the schema's bounds
    proposed.parent.mkdir(parents=True, exist_ok=True)
    proposed.write_text(text)
    proc = run([*KEEL, "apply", "--confirm", str(confirm_s), str(proposed)])
    if proc.returncode != 0:
        return False, f"not applied: {_last_line(proc)}"
    return True, (f"applied CAKE {upload_kbit} kbit/s up, {download_kbit} kbit/s down: rolls "
                  f"back in {confirm_s} s unless kept ([k], or keel confirm)")


def confirm(run: Run = _run) -> str:
    """`keel confirm`: keep what apply --confirm applied."""
    proc = run([*KEEL, "confirm"])
    return (proc.stdout or "").strip() or _last_line(proc)
