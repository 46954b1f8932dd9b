"""Keys typed ahead of the UI land where the user meant them.

Textual hands a key to the widget focused when the app reads it, and a
focus change that a key causes (an [enter] that goes on to the next field)
happens a few messages later. On a throttled VPS's web console, or a serial
line, a user types faster than the UI takes the keys: the gateway typed
after the address's [enter] landed in the address field
("198.51.100.2/24198.51.100.1").

So the app reads keys one at a time: a key is held until what the key
before it set going (a focus change, a field shown, a step mounted) has
settled, that is until every message queue of the app and its screen has
been found empty before and after a round of callbacks through all of them.
A key waits at most MOST seconds for that; then it goes on as Textual would
have taken it. A key that finds the UI settled goes on at once."""

from __future__ import annotations

import asyncio
from collections import deque
from typing import Any

from textual import events

MOST = 5.0  # seconds a key waits at most for the one before it to settle


class Typeahead:
    """The app's keys in the order typed, each let through once the UI has
    settled after the one before it."""

    def __init__(self, app: Any, most: float = MOST) -> None:
        self.app = app
        self.most = most
        self.held: deque[events.Key] = deque()
        self.let_through: dict[int, events.Key] = {}  # by id: keys sent on
        self.feeder: asyncio.Task[None] | None = None

    def holds(self, event: events.Key) -> bool:
        """Whether the app must not take `event` now (it is held, to be sent
        again when its turn comes); False for a key whose turn it is."""
        if self.let_through.pop(id(event), None) is not None:
            return False
        self.held.append(event)
        if self.feeder is None or self.feeder.done():
            self.feeder = asyncio.get_running_loop().create_task(self._feed())
        return True

    async def _feed(self) -> None:
        try:
            while self.held:
                self._send(self.held.popleft())
                await settled(self.app, self.most)
        finally:  # cancelled (the app ends) or broken: no key is lost
            while self.held:
                self._send(self.held.popleft())

    def _send(self, event: events.Key) -> None:
        self.let_through[id(event)] = event
        if not self.app.post_message(event):
            self.let_through.pop(id(event), None)


def _pumps(app: Any) -> list[Any]:
    try:
        screen = app.screen
    except Exception:  # no screen yet, or the app is ending
        return [app]
    return [app, *screen.walk_children(with_self=True)]


def _idle(pumps: list[Any]) -> bool:
    return all(pump.message_queue_size == 0 for pump in pumps)


async def _round(pumps: list[Any], timeout: float) -> bool:
    """A callback through each pump's queue, after what it holds now; False
    if they were not all called within `timeout` seconds."""
    called = asyncio.Event()
    count = 0

    def one() -> None:
        nonlocal count
        count -= 1
        if count == 0:
            called.set()

    for pump in pumps:
        if pump.call_later(one):
            count += 1
    if not count:
        return True
    try:
        await asyncio.wait_for(called.wait(), timeout)
    except TimeoutError:
        return False
    return True


async def settled(app: Any, most: float) -> None:
    """Return once the app and its screen's widgets have no message waiting
    before and after a round of callbacks (each pump also finished what it
    was handling), or after `most` seconds."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + most
    while (left := deadline - loop.time()) > 0:
        pumps = _pumps(app)
        before = _idle(pumps)
        if not await _round(pumps, left):
            return
        if before and _idle(pumps):
            return
