"""What ends a pairing: one line that says why. Nothing was changed."""

from __future__ import annotations


class PairError(Exception):
    """The session ended: a wrong code, a timeout, a cut, a bad message."""


class PairRefused(PairError):
    """One side cannot take the other: the prefix is full, the LANs overlap,
    the settings would not validate."""
