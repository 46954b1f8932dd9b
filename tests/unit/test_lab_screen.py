"""The console UI read off a guest's serial line (tests/lab/screen.run_ui):
the shell's end marker is found whichever reads it comes in."""

from __future__ import annotations

import pexpect
import pytest

from tests.lab.screen import run_ui


class Accel:
    def scale(self, seconds: float) -> float:
        return seconds


class Child:
    """A serial line that hands over `chunks`, one a read, then nothing."""

    def __init__(self, chunks: list[bytes]) -> None:
        self.chunks, self.sent = list(chunks), []

    def sendline(self, line: str) -> None:
        self.sent.append(line)

    def send(self, key: str) -> None:
        self.sent.append(key)

    def read_nonblocking(self, size: int, timeout: float) -> bytes:
        if not self.chunks:
            raise pexpect.TIMEOUT("nothing more")
        return self.chunks.pop(0)


class Edge:
    name = "edge"

    def __init__(self, chunks: list[bytes]) -> None:
        self.child, self.accel, self.commands = Child(chunks), Accel(), []

    def check(self, cmd: str) -> str:
        self.commands.append(cmd)
        return ""


UI = b"TERM=vt220 keel tui --seconds 5; echo UI\"\"-DONE\r\n\x1b[2J\x1b[HNOW healthy\r\n"


@pytest.mark.parametrize("cut", range(1, len(b"UI-DONE")))
def test_the_end_marker_cut_between_two_reads_is_found(cut):
    tail = b"UI-DONE\r\nlab# "
    edge = Edge([UI, tail[:cut], tail[cut:]])
    screen = run_ui(edge, 5)  # type: ignore[arg-type]
    assert "NOW healthy" in "\n".join(screen.display)
    assert edge.commands[-1] == "stty sane; true"  # ended, back in step with the shell


def test_done_quits_the_ui_once_its_figures_are_drawn():
    edge = Edge([UI, b"\x1b[2;1Htx 4.4M", b"UI-DONE\r\n"])
    run_ui(edge, 5, lambda screen: "tx 4.4M" in "\n".join(screen.display))  # type: ignore[arg-type]
    assert edge.child.sent[-1] == "q"
