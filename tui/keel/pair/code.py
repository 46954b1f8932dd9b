"""The one-time code: 8 digits, shown as 1234-5678. Digits read off any
screen and type on any keyboard layout; with one attempt per code, a guess
wins once in 10^8 sessions."""

from __future__ import annotations

import secrets

from keel.pair.errors import PairError

DIGITS = 8


def new_code() -> str:
    number = f"{secrets.randbelow(10 ** DIGITS):0{DIGITS}d}"
    return f"{number[:4]}-{number[4:]}"


def normalize(typed: str) -> str:
    """The digits of a typed code (spaces and dashes allowed); raises
    PairError naming what is wrong, never echoing the code."""
    digits = "".join(ch for ch in typed if ch not in " -")
    if not digits.isascii() or (digits and not digits.isdigit()):
        raise PairError("the code is digits only (like 1234-5678)")
    if len(digits) != DIGITS:
        raise PairError(f"the code has {DIGITS} digits; {len(digits)} were typed")
    return digits
