"""Applying measured CAKE rates: the config in force with wan.shaping's two
rates changed, applied with confirm (keel.apply.confirmed). What the console
UI's [a] key does."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from keel.apply.confirmed import CONFIRM_SECONDS, KEEL, Run, _run, apply_with_confirm, confirm
from keel.config.schema import Config
from keel.model.reading import config_in_force, read_loaded

PROPOSED = Path("/run/keel/proposed-rates.toml")

__all__ = ["CONFIRM_SECONDS", "KEEL", "PROPOSED", "Run", "apply_rates", "confirm", "with_rates"]


def with_rates(config: Config, upload_kbit: int, download_kbit: int) -> Config:
    shaping = dataclasses.replace(config.wan.shaping, upload_kbit=upload_kbit,
                                  download_kbit=download_kbit)
    return dataclasses.replace(config, wan=dataclasses.replace(config.wan, shaping=shaping))


def apply_rates(upload_kbit: int, download_kbit: int, *, source: Path | None = None,
                proposed: Path = PROPOSED, confirm_s: int = CONFIRM_SECONDS,
                run: Run = _run) -> tuple[bool, str]:
    """Apply the config in force with these rates, with confirm. (applied?, what to say)."""
    loaded = read_loaded(source or config_in_force())  # raises InvalidConfig
    applied, said = apply_with_confirm(with_rates(loaded.config, upload_kbit, download_kbit),
                                       proposed, note="rates from the throughput test",
                                       confirm_s=confirm_s, run=run)
    if not applied:
        return False, f"not applied: {said}"
    return True, (f"applied CAKE {upload_kbit} kbit/s up, {download_kbit} kbit/s down: rolls "
                  f"back in {confirm_s} s unless kept ([k], or keel confirm)")
