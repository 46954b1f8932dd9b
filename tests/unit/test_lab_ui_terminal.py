"""The UI driver's terminal (tests/lab/ui_driver.py) against Textual itself:
two inputs in a pseudo-terminal at 80x24, TERM=vt220 as on the console. The
driver says it has synchronized output; Textual then brackets its frames,
and a frame shows where the focus is (the cursor at the focused input's
caret). How the bytes are split between reads changes nothing."""

from __future__ import annotations

import sys
import time
from functools import cache
from itertools import pairwise

import pexpect
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.lab.ui_driver import SYNC_REPLY, Terminal

APP = """
from textual.app import App
from textual.widgets import Input

class Two(App):
    CSS = "Input { width: 30; }"
    def compose(self):
        yield Input(id="a")
        yield Input(id="b")

Two().run()
"""


def pump(child: pexpect.spawn, term: Terminal, seconds: float, raw: bytearray) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            data = child.read_nonblocking(65536, timeout=0.1)
        except pexpect.TIMEOUT:
            continue
        raw += data
        if term.feed(data):
            child.send(SYNC_REPLY)


def until(child, term, raw, done, seconds: float = 20) -> None:
    deadline = time.monotonic() + seconds
    while not done() and time.monotonic() < deadline:
        pump(child, term, 0.2, raw)
    assert done(), "\n".join(term.screen.display)


def drive() -> tuple[bytes, list[tuple[int, tuple[int, int]]]]:
    """Run the app; type into the first input, Tab, type into the second.
    Returns every byte it wrote and (frames, cursor) after each step."""
    child = pexpect.spawn(sys.executable, ["-c", APP], env={"TERM": "vt220", "PATH": "/usr/bin"},
                          dimensions=(24, 80), timeout=None)
    term, raw, steps = Terminal(80, 24), bytearray(), []
    try:
        until(child, term, raw, lambda: term.frames > 0 and term.cursor != (0, 0))
        steps.append((term.frames, term.cursor))
        child.send("one")
        until(child, term, raw, lambda: "one" in "\n".join(term.screen.display))
        steps.append((term.frames, term.cursor))
        child.send("\t")
        until(child, term, raw, lambda: term.cursor[1] != steps[-1][1][1])
        steps.append((term.frames, term.cursor))
        child.send("two")
        until(child, term, raw, lambda: "two" in "\n".join(term.screen.display))
        steps.append((term.frames, term.cursor))
    finally:
        child.terminate(force=True)
    return bytes(raw), steps


@cache
def recorded() -> tuple[bytes, list[tuple[int, tuple[int, int]]]]:
    return drive()


def test_textual_brackets_its_frames_and_the_cursor_follows_the_focus() -> None:
    _, steps = recorded()
    (f0, at_a), (f1, typed_a), (f2, at_b), (f3, typed_b) = steps
    assert f0 > 0 and f0 < f1 < f2 < f3
    assert typed_a == (at_a[0] + 3, at_a[1])  # the caret after "one"
    assert at_b[1] > at_a[1]  # the second input, below the first
    assert typed_b == (at_b[0] + 3, at_b[1])


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=1 << 20), max_size=40))
def test_where_reads_split_the_bytes_changes_nothing(cuts: list[int]) -> None:
    raw, _ = recorded()
    whole = Terminal(80, 24)
    whole.feed(raw)
    split = Terminal(80, 24)
    asked = 0
    edges = sorted({c % (len(raw) + 1) for c in cuts} | {0, len(raw)})
    for a, b in pairwise(edges):
        asked += split.feed(raw[a:b])
    assert asked == 1 and split.asked and whole.asked
    assert (split.frames, split.cursor) == (whole.frames, whole.cursor)
    assert split.screen.display == whole.screen.display
