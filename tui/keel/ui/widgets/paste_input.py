"""An Input whose paste enters only as one clean line.

Input's own paste keeps what comes before the first of str.splitlines'
separators ('\r', '\x0b', '\x85', '\u2028' ...) and drops the rest without a
word. Here a paste is split by `lines` (on '\n' only: what the box takes is
what a user sees), and a paste of several lines never enters the box; nor
does a line with a character `clean` refuses, unless `check` takes it. The
screen is told why (Refused), and says it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from textual import events
from textual.message import Message
from textual.widgets import Input

# a paste's text -> its lines that count (blank ones dropped)
Lines = Callable[[str], list[str]]


class GuardedPasteInput(Input):
    """`lines` splits a paste; `clean` says whether a character may enter
    as it is; `check` raises ValueError, with the reason to show, for a line
    that may not; `one` says what a paste should be ("paste one key at a
    time")."""

    class Refused(Message):
        """A paste kept out of the box, and why (printable ASCII)."""

        def __init__(self, why: str) -> None:
            super().__init__()
            self.why = why

    def __init__(self, lines: Lines, clean: Callable[[str], bool],
                 check: Callable[[str], object], one: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.lines, self.clean, self.check, self.one = lines, clean, check, one

    def _on_paste(self, event: events.Paste) -> None:
        event.stop()
        event.prevent_default()  # Input's own handler (splitlines()[0]) does not run
        lines = self.lines(event.text)
        if len(lines) > 1:
            self.post_message(self.Refused(f"{len(lines)} lines pasted: {self.one}"))
            return
        if not lines:
            return
        line = lines[0]
        if not all(self.clean(ch) for ch in line):
            try:
                self.check(line)
            except ValueError as err:
                self.post_message(self.Refused(str(err)))
                return
        if self.selection.is_empty:
            self.insert_text_at_cursor(line)
        else:
            self.replace(line, *self.selection)
