"""What a guest's screen shows, as text: QEMU's own picture of its display
(QMP `screendump`, a PPM of the VGA or virtio-vga framebuffer) read by
tesseract. The serial console cannot tell whether anything reaches the
screen: a KMS driver that takes the firmware's framebuffer with no fbdev
emulation leaves the console UI drawing on nothing (docs/hardware.md)."""

from __future__ import annotations

import re
import subprocess
import time
from pathlib import Path

from tests.lab.guest import Guest
from tests.lab.paths import LabError
from tests.lab.qmp import Qmp


def screendump(guest: Guest, path: Path) -> Path:
    """QEMU's picture of `guest`'s screen, written to `path` (PPM)."""
    if guest.qmp is None:
        raise LabError(f"{guest.name}: no QMP socket to take its screen through")
    with Qmp(guest.qmp) as qmp:
        qmp.command("screendump", filename=str(path))
    return path


def read(picture: Path) -> str:
    """The text tesseract finds on `picture` (a console font on a plain
    background reads well once scaled: tesseract's own --dpi hint)."""
    done = subprocess.run(["tesseract", str(picture), "-", "--dpi", "300", "--psm", "3"],
                          capture_output=True, text=True, timeout=120, check=False)
    if done.returncode != 0:
        raise LabError(f"tesseract on {picture}: {done.stderr.strip()[:300]}")
    return done.stdout


def wait_for(guest: Guest, pattern: str, timeout: float) -> str:
    """The screen's text once `pattern` (a regular expression, any case) is
    on it; the last text read, in the error, if it never is. The pictures
    stay in the guest's work directory (the last one: screen.ppm)."""
    deadline = time.monotonic() + guest.accel.scale(timeout)
    picture = guest.workdir / f"{guest.name}.screen.ppm"
    text = ""
    while True:
        text = read(screendump(guest, picture))
        if re.search(pattern, text, re.I):
            return text
        if time.monotonic() > deadline:
            raise LabError(f"{guest.name}: {pattern!r} not on the screen within {timeout} s "
                           f"(scaled); it shows:\n{text}")
        time.sleep(3)
