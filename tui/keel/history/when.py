"""A moment as a user types it for `keel history --since/--until` (pure).

  now                 the present
  90s 15m 2h 7d       that long before now (units s, m, h, d, w; a leading
                      minus, -2h, reads the same: --since=-2h)
  2026-11-24          midnight UTC of that day
  2026-11-24T21:05    that minute, UTC (seconds optional, a trailing Z allowed)
  @1764000000         Unix seconds

Anything else is a WhenError that names what was typed (escaped) and what
is accepted."""

from __future__ import annotations

import re
from datetime import UTC, datetime

from keel.shown import shown

UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}
MAX_AGO_S = 10 * 365 * 86400  # further back than any history keeps
MAX_LEN = 40
_AGO = re.compile(r"-?(\d{1,9})([smhdw])")
_DAY = re.compile(r"(\d{4})-(\d{2})-(\d{2})")
_MINUTE = re.compile(r"(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2}))?Z?")
_UNIX = re.compile(r"@(\d{1,12})")
ACCEPTED = "now, 15m, 2h, 7d (ago), 2026-11-24, 2026-11-24T21:05 (UTC) or @UNIXSECONDS"


class WhenError(ValueError):
    """A moment that does not parse; the message says what was typed."""


def parse_when(text: str, now: float) -> float:
    """Unix seconds of `text` (see the module's forms); WhenError otherwise."""
    typed = text.strip()
    if len(typed) > MAX_LEN:
        raise WhenError(f"{shown(typed, MAX_LEN)!s}: too long for a moment; use {ACCEPTED}")
    if typed == "now":
        return now
    if m := _AGO.fullmatch(typed):
        ago = int(m[1]) * UNITS[m[2]]
        if ago > MAX_AGO_S:
            raise WhenError(f"{typed}: further back than ten years")
        return now - ago
    if m := _UNIX.fullmatch(typed):
        return float(m[1])
    try:
        if m := _DAY.fullmatch(typed):
            return datetime(int(m[1]), int(m[2]), int(m[3]), tzinfo=UTC).timestamp()
        if m := _MINUTE.fullmatch(typed):
            return datetime(int(m[1]), int(m[2]), int(m[3]), int(m[4]), int(m[5]),
                            int(m[6] or 0), tzinfo=UTC).timestamp()
    except ValueError as err:
        raise WhenError(f"{shown(typed)}: {err}") from None
    raise WhenError(f"{shown(typed)}: not a moment; use {ACCEPTED}")
