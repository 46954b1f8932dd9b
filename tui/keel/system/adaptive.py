"""Adaptive CAKE's state as its daemon (keel.adaptive.daemon) keeps it:
/run/keel/adapt.json, rewritten once a second while it runs, removed when it
stops. The one reader, for the console's CAKE panel and the verdicts.

The file is parsed strictly and with a bound on its size: anything that is
not what the daemon writes (missing, too large, not JSON, a field of the
wrong type, bounds out of order, a stale time) reads as "not adaptive" (None),
never as an exception."""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import Any

from keel.system.source import Source, SourceError
from keel.thresholds import ADAPT_STATE_FRESH_S

STATE_PATH = "/run/keel/adapt.json"  # keel.adaptive.daemon: RUN_DIR / STATE
MAX_BYTES = 4096  # the daemon writes about 400
WAYS = ("up", "down")
_DEV = re.compile(r"^[A-Za-z0-9_.:@-]{1,15}$")  # an interface name (IFNAMSIZ - 1)


@dataclass(frozen=True)
class AdaptWay:
    """One direction the daemon shapes ("up": egress, "down": the IFB)."""

    rate_kbit: int  # where the daemon has put CAKE's rate
    min_kbit: int
    base_kbit: int
    max_kbit: int
    through_kbit: int  # what got through, over the daemon's load window
    baseline_ms: float | None  # the one-way delay's baseline; None until a sample
    dev: str


@dataclass(frozen=True)
class AdaptState:
    t: float  # epoch seconds the daemon wrote it
    peer: str  # the address it probes
    answers: int  # probes answered since it started
    peer_silent_s: float | None  # seconds since the last answer; None: none yet
    up: AdaptWay | None  # None: that direction is not shaped
    down: AdaptWay | None

    def way(self, name: str) -> AdaptWay | None:
        return self.up if name == "up" else self.down if name == "down" else None


def _int(value: Any, low: int = 0) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise ValueError(f"not an integer >= {low}: {value!r}")
    return value


def _number(value: Any, low: float = 0.0) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) \
            or not math.isfinite(value) or value < low:
        raise ValueError(f"not a number >= {low}: {value!r}")
    return float(value)


def _text(value: Any, limit: int = 64) -> str:
    if not isinstance(value, str) or not value or len(value) > limit \
            or not value.isprintable():
        raise ValueError(f"not a short printable string: {value!r}")
    return value


def _way(raw: Any) -> AdaptWay:
    if not isinstance(raw, dict):
        raise ValueError("a direction is not an object")
    low, base, high = (_int(raw[k], 1) for k in ("min_kbit", "base_kbit", "max_kbit"))
    rate = _int(raw["rate_kbit"], 1)
    if not low <= base <= high or not low <= rate <= high:
        raise ValueError(f"out of order: min {low} base {base} max {high} rate {rate}")
    baseline = raw.get("baseline_ms")
    dev = _text(raw["dev"], 15)
    if not _DEV.match(dev):
        raise ValueError(f"not an interface name: {dev!r}")
    return AdaptWay(rate, low, base, high, round(_number(raw["through_kbit"])),
                    None if baseline is None else _number(baseline, -1e6), dev)


def parse_state(text: str) -> AdaptState | None:
    """adapt.json's text -> its state; None when it is not what the daemon
    writes (pure)."""
    if len(text) > MAX_BYTES:
        return None
    try:
        raw = json.loads(text)
        if not isinstance(raw, dict):
            return None
        silent = raw.get("peer_silent_s")
        ways = {w: _way(raw[w]) if w in raw else None for w in WAYS}
        if not any(ways.values()):
            return None  # the daemon refuses to start with nothing to adapt
        return AdaptState(_number(raw["t"]), _text(raw["peer"]), _int(raw["answers"]),
                          None if silent is None else _number(silent), ways["up"],
                          ways["down"])
    except (ValueError, KeyError, TypeError, RecursionError):
        return None


def read_state(source: Source, now: float, path: str = STATE_PATH,
               fresh_s: float = ADAPT_STATE_FRESH_S) -> AdaptState | None:
    """The daemon's state now, or None: not running (no file), a file that
    is not its, or one it stopped rewriting more than `fresh_s` seconds ago
    (a daemon that died without removing it)."""
    try:
        text = source.read_text(path)
    except (SourceError, OSError, UnicodeError):
        return None
    state = parse_state(text)
    if state is None or abs(now - state.t) > fresh_s:
        return None
    return state
