"""Applying measured CAKE rates: the config in force with wan.shaping's two
rates changed, applied with confirm (keel.apply.confirmed). What the console
UI's [a] key does: fixed rates, or adaptive CAKE around them."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from keel.apply.confirmed import CONFIRM_SECONDS, KEEL, Run, _run, apply_with_confirm, confirm
from keel.config.schema import Config
from keel.model.reading import config_in_force, read_loaded

PROPOSED = Path("/run/keel/proposed-rates.toml")

__all__ = ["CONFIRM_SECONDS", "KEEL", "PROPOSED", "Run", "adaptive_bounds", "adaptive_refusal",
           "apply_rates", "confirm", "with_rates"]


def adaptive_bounds(base_kbit: int, measured_kbit: int) -> tuple[int, int, int]:
    """THE RULE of adaptive CAKE from a measurement, (min, base, max) kbit/s
    of one direction: the base is the rate recommended today (90 % of what
    the throughput test carried), the max what it carried (the line at its
    best: CAKE never shapes above what was seen), the min half the base (a
    line that falls further is a broken one, not a slow one: CAKE stops
    following there). (0, 0, 0) for a direction that is not shaped."""
    if base_kbit <= 0:
        return 0, 0, 0
    return max(1, base_kbit // 2), base_kbit, max(base_kbit, measured_kbit)


def adaptive_refusal(config: Config) -> str | None:
    """Why adaptive CAKE cannot be offered with this config, or None when it
    can: its daemon probes the tunnel's peer (the loader's own condition,
    keel.config.relations)."""
    wg = config.wireguard
    if not wg.enabled:
        return "the tunnel is off: adaptive CAKE probes the tunnel's peer"
    if not any(p.endpoint for p in wg.peer):
        return ("no tunnel peer with an endpoint to probe (a hub's peers have none: "
                "adaptive CAKE runs on the edge)")
    return None


def with_rates(config: Config, upload_kbit: int, download_kbit: int,
               measured: tuple[int, int] | None = None) -> Config:
    """The config with these CAKE rates: fixed (adaptive off, its bounds
    cleared), or with `measured` (upload, download kbit/s the test carried)
    adaptive around them by adaptive_bounds."""
    up = adaptive_bounds(upload_kbit, measured[0]) if measured else (0, 0, 0)
    down = adaptive_bounds(download_kbit, measured[1]) if measured else (0, 0, 0)
    shaping = dataclasses.replace(
        config.wan.shaping, upload_kbit=upload_kbit, download_kbit=download_kbit,
        adaptive=measured is not None, upload_min_kbit=up[0], upload_max_kbit=up[2],
        download_min_kbit=down[0], download_max_kbit=down[2])
    return dataclasses.replace(config, wan=dataclasses.replace(config.wan, shaping=shaping))


def apply_rates(upload_kbit: int, download_kbit: int, *, source: Path | None = None,
                proposed: Path = PROPOSED, confirm_s: int = CONFIRM_SECONDS,
                run: Run = _run, measured: tuple[int, int] | None = None) -> tuple[bool, str]:
    """Apply the config in force with these rates, with confirm; adaptive
    around them with `measured` (upload, download kbit/s). (applied?, what
    to say)."""
    loaded = read_loaded(source or config_in_force())  # raises InvalidConfig
    config = with_rates(loaded.config, upload_kbit, download_kbit, measured)
    note = ("adaptive rates from the throughput test" if measured
            else "rates from the throughput test")
    applied, said = apply_with_confirm(config, proposed, note=note, confirm_s=confirm_s,
                                       run=run)
    if not applied:
        return False, f"not applied: {said}"
    then = f"rolls back in {confirm_s} s unless kept ([k], or keel confirm)"
    if measured:
        s = config.wan.shaping
        return True, (f"applied adaptive CAKE up {s.upload_min_kbit}-{upload_kbit}-"
                      f"{s.upload_max_kbit}, down {s.download_min_kbit}-{download_kbit}-"
                      f"{s.download_max_kbit} kbit/s (min-base-max): {then}")
    return True, f"applied CAKE {upload_kbit} kbit/s up, {download_kbit} kbit/s down: {then}"
