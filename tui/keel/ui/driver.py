"""The terminal driver: Textual's Linux driver with a quieter input thread.

Textual's input thread waits for input in a select() with a 0.1 s timeout, so
it wakes ten times a second whatever happens (what that cost the console
dashboard: docs/console.md). The timeout is there for the parser's tick: an
escape key alone is told from the start of an escape sequence by the time
that follows it. Here the thread keeps Textual's 0.1 s while input is coming (for a second
after any), and sleeps a second at a time otherwise: an escape key is as
prompt as before; the price is that a UI idle at the keyboard stops up to a
second after it is asked to (`--seconds`, a suspend for the shell is asked
from the keyboard, so it is prompt).

The loop is Textual's (textual 7.5, drivers/linux_driver.py), with only the
timeout changed.
"""

from __future__ import annotations

import os
import selectors
import time
from codecs import getincrementaldecoder

from textual._loop import loop_last
from textual._parser import ParseError
from textual._xterm_parser import XTermParser
from textual.drivers.linux_driver import LinuxDriver

BUSY_WAIT = 0.1  # Textual's timeout: the parser's tick while keys come
QUIET_WAIT = 1.0  # with no input for BUSY_FOR seconds
BUSY_FOR = 1.0


def wait_for(since_input: float) -> float:
    """The input thread's select() timeout, `since_input` seconds after the
    last input."""
    return BUSY_WAIT if since_input < BUSY_FOR else QUIET_WAIT


class QuietLinuxDriver(LinuxDriver):
    """LinuxDriver whose input thread wakes for input, not ten times a second."""

    def run_input_thread(self) -> None:
        """Wait for input and dispatch events (Textual's loop, another timeout)."""
        selector = selectors.SelectSelector()
        selector.register(self.fileno, selectors.EVENT_READ)
        fileno = self.fileno
        parser = XTermParser(self._debug)
        decode = getincrementaldecoder("utf-8")().decode
        last_input = time.monotonic()

        def process_selector_events(
                selector_events: list[tuple[selectors.SelectorKey, int]],
                final: bool = False) -> None:
            nonlocal last_input
            for last, (_key, mask) in loop_last(selector_events):
                if mask & selectors.EVENT_READ:
                    unicode_data = decode(os.read(fileno, 1024 * 4), final=final and last)
                    if not unicode_data:
                        break  # stdin piped and at its end
                    last_input = time.monotonic()
                    for event in parser.feed(unicode_data):
                        self.process_message(event)
            for event in parser.tick():
                self.process_message(event)

        try:
            while not self.exit_event.is_set():
                timeout = wait_for(time.monotonic() - last_input)
                process_selector_events(selector.select(timeout))
            selector.unregister(self.fileno)
            process_selector_events(selector.select(BUSY_WAIT), final=True)
        finally:
            selector.close()
            try:
                for _event in parser.feed(""):
                    pass
            except (EOFError, ParseError):
                pass
