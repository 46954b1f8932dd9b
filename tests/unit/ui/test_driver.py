"""The console's input thread: keys arrive as with Textual's own loop (an
escape key alone too), and an idle thread wakes once a second, not ten times."""

from __future__ import annotations

import os
import threading
import time

from textual import events

from keel.ui import driver
from keel.ui.driver import QuietLinuxDriver


def test_the_wait_is_textuals_while_keys_come_and_a_second_when_idle():
    assert driver.wait_for(0.0) == driver.wait_for(0.9) == 0.1
    assert driver.wait_for(1.0) == driver.wait_for(600.0) == 1.0


class Recording(QuietLinuxDriver):
    """The input loop alone: no terminal set up, the events kept."""

    def __init__(self, fileno: int) -> None:  # not LinuxDriver's: no tty, no signals
        self.fileno, self._debug = fileno, False
        self.exit_event = threading.Event()
        self.seen: list[events.Key] = []

    def process_message(self, message) -> None:
        if isinstance(message, events.Key):
            self.seen.append(message)


def wait_until(check, seconds: float) -> float:
    start = time.monotonic()
    while not check():
        assert time.monotonic() - start < seconds, "not in time"
        time.sleep(0.01)
    return time.monotonic() - start


def test_keys_and_a_lone_escape_arrive_promptly_and_the_thread_stops():
    read, write = os.pipe()
    d = Recording(read)
    thread = threading.Thread(target=d.run_input_thread, daemon=True)
    thread.start()
    try:
        time.sleep(1.3)  # idle: the thread is in its one-second wait
        os.write(write, b"a")
        assert wait_until(lambda: [k.key for k in d.seen] == ["a"], 0.5) < 0.5
        os.write(write, b"\x1b")  # an escape key alone: told by the time after it
        wait_until(lambda: [k.key for k in d.seen] == ["a", "escape"], 0.6)
    finally:
        d.exit_event.set()
        thread.join(2.5)
        os.close(write)
    assert not thread.is_alive()
    os.close(read)
