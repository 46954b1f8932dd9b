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


def cut(text: str, width: int) -> str:
    """`text`, or its start and "..." in `width` characters."""
    return text if len(text) <= width else text[:width - 3] + "..."


def last_line(text: str) -> str:
    """The last line of what a command said ("" for nothing)."""
    lines = text.strip().splitlines()
    return lines[-1] if lines else ""


def progress_bar(fraction: float, width: int = 30) -> str:
    """"[####......]  40%": `fraction` done, in `width` cells."""
    done = max(0, min(width, round(fraction * width)))
    return "[" + "#" * done + "." * (width - done) + f"] {fraction * 100:3.0f}%"


def countdown_bar(remaining: float, total: float, width: int = 40) -> str:
    """"[######----] 7 s": the time left of `total`, whole seconds rounded up."""
    fraction = max(0.0, min(1.0, remaining / total)) if total > 0 else 0.0
    done = round(fraction * width)
    return "[" + "#" * done + "-" * (width - done) + f"] {max(0, int(remaining + 0.999))} s"
