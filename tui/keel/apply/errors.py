"""Why an apply stops: the config is invalid (nothing was changed), or the
system refused a change (nothing after the failing step ran)."""

from __future__ import annotations

from keel.model.reading import InvalidConfig

__all__ = ["InvalidConfig", "Refused"]


class Refused(Exception):
    """The system refused a change; the message says which and why."""
