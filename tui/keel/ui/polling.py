"""When to poll the collectors, and the message that carries what a poll
saw. A screen polls every collector due in one thread a tick (in the screen's
order, the verdict last: it reads the others' latest snapshots) and gets their
snapshots in one message, which it draws in one go: one thread job, one
message and one frame a tick, not a worker, a timer and a message per
collector (docs/console.md: the UI's own cost)."""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from typing import Any

from textual.message import Message

# a collector due this little after the tick is polled with it (timers fire late)
SLACK = 0.05


def aligned_delay(interval: float, now: float | None = None) -> float:
    """Seconds to the next multiple of `interval` on the monotonic clock: the
    collectors of one interval are polled together, so their snapshots are
    drawn in one frame, not one frame each (what the console's CPU goes on)."""
    now = time.monotonic() if now is None else now
    return interval - now % interval


class PollSchedule:
    """When each collector is due: at the multiples of its interval on the
    monotonic clock (so collectors of several intervals meet on one tick)."""

    def __init__(self, intervals: Mapping[str, float]) -> None:
        self.intervals = dict(intervals)  # in the order they are polled
        self.due_at = dict.fromkeys(self.intervals, float("-inf"))

    def due(self, now: float) -> list[str]:
        """The collectors due now, in order."""
        return [name for name, at in self.due_at.items() if at <= now + SLACK]

    def polled(self, names: Iterable[str], now: float) -> None:
        """They were polled at `now` (on or near a tick): each is next due at
        the multiple of its interval after the one `now` is at."""
        for name in names:
            interval = self.intervals[name]
            half = now + interval / 2  # a tick that fired a little early is still its tick
            self.due_at[name] = half + aligned_delay(interval, half)

    def all_due(self) -> None:
        for name in self.due_at:
            self.due_at[name] = float("-inf")

    def delay(self, now: float) -> float | None:
        """Seconds until the next collector is due; None when there is none."""
        if not self.due_at:
            return None
        return max(0.0, min(self.due_at.values()) - now)


class Polled(Message, bubble=False):
    """A tick's snapshots (collector name -> snapshot, in polling order),
    posted from the poll thread to its screen (and no further)."""

    def __init__(self, snapshots: Mapping[str, Any]) -> None:
        super().__init__()
        self.snapshots = snapshots


def poll_each(collectors: Iterable[tuple[str, Any]]) -> dict[str, Any]:
    """Each collector's poll(); one that raises is left out (it says what went
    wrong in its snapshots; the others are still drawn)."""
    snapshots = {}
    for name, collector in collectors:
        try:
            snapshots[name] = collector.poll()
        except Exception:  # a collector's bug must not blank the others
            continue
    return snapshots
