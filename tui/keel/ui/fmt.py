"""Number formatting for narrow columns (ASCII only)."""

from __future__ import annotations


def rate(bps: float | None, width: int = 0) -> str:
    """bits/s as "12.3M", "850k", "1.20G"; "-" when unknown."""
    if bps is None:
        text = "-"
    elif bps >= 1e9:
        text = f"{bps / 1e9:.2f}G"
    elif bps >= 1e6:
        text = f"{bps / 1e6:.1f}M"
    elif bps >= 1e3:
        text = f"{bps / 1e3:.0f}k"
    else:
        text = f"{bps:.0f}"
    return text.rjust(width)


def count(n: float | None) -> str:
    if n is None:
        return "-"
    if n >= 1e6:
        return f"{n / 1e6:.1f}M"
    if n >= 1e4:
        return f"{n / 1e3:.0f}k"
    if n >= 1e3:
        return f"{n / 1e3:.1f}k"
    return f"{n:.0f}"


def size(nbytes: int) -> str:
    if nbytes >= 1 << 20:
        return f"{nbytes / (1 << 20):.1f}M"
    if nbytes >= 1 << 10:
        return f"{nbytes / (1 << 10):.0f}k"
    return f"{nbytes}B"


def ms(value: float | None) -> str:
    if value is None:
        return "-"
    if value == 0:
        return "0"
    if value >= 100:
        return f"{value:.0f}"
    if value >= 10:
        return f"{value:.1f}"
    return f"{value:.1f}" if value >= 1 else f"{value:.2f}"


def pct(share: float, width: int = 4) -> str:
    return f"{share * 100:.0f}%".rjust(width)


def age(seconds: float | None) -> str:
    if seconds is None:
        return "never"
    s = int(seconds)
    if s < 120:
        return f"{s}s"
    if s < 7200:
        return f"{s // 60}m"
    return f"{s // 3600}h"


def short_key(key: str) -> str:
    return key[:8]
