"""Collectors keep their latest snapshot: what the verdict collector combines."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

SnapshotT = TypeVar("SnapshotT")


def remembered(poll: Callable[[Any], SnapshotT]) -> Callable[[Any], SnapshotT]:
    """A collector's poll that keeps its snapshot in `last` (an immutable
    object: whoever combines snapshots, keel.metrics.verdict, reads it from
    any thread)."""

    @functools.wraps(poll)
    def wrapper(self: Any) -> SnapshotT:
        self.last = poll(self)
        return self.last

    return wrapper
