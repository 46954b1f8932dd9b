"""The console profile: chosen from TERM and the tty, applied to the
environment before Textual is imported (Textual reads it at import)."""

from __future__ import annotations

import os
import re
import sys
from collections.abc import MutableMapping
from dataclasses import dataclass

# What the console profile draws: 16 colours (TEXTUAL_COLOR_SYSTEM=standard,
# an ANSI theme) and the glyphs of the VGA font the Linux console has built in
# (code page 437, mapped from Unicode by the kernel's default map): ASCII, and
# of the block elements only the lower half and the full block (the
# sparklines' bars; the eighth blocks Textual draws are not in the font).
# Borders and the plot are ASCII.
CONSOLE_BLOCKS = "\u2584\u2588"
CONSOLE_TERMS = ("linux", "vt100", "vt102", "vt220", "dumb")
CONSOLE_TTY = re.compile(r"^/dev/(tty[0-9]+|ttyS[0-9]+|ttyAMA[0-9]+|ttyUSB[0-9]+|hvc[0-9]+)$")


@dataclass(frozen=True)
class Profile:
    console: bool
    data_interval: float  # seconds between polls of each collector
    latency_interval: float  # seconds between plot updates
    plot_bucket: float  # seconds of probes per plot column
    fps: int
    theme: str

    @property
    def mouse(self) -> bool:
        return not self.console


CONSOLE = Profile(console=True, data_interval=1.0, latency_interval=1.0, plot_bucket=1.0,
                  fps=5, theme="textual-ansi")
MODERN = Profile(console=False, data_interval=1.0, latency_interval=0.5, plot_bucket=0.2,
                 fps=30, theme="textual-dark")


def current_tty() -> str:
    for stream in (sys.stdin, sys.stdout):
        try:
            return os.ttyname(stream.fileno())
        except (OSError, ValueError, AttributeError):
            continue
    return ""


def is_console(term: str, tty: str) -> bool:
    """A VGA or serial console: TERM linux/vt*, or a /dev/ttyN, ttyS* tty."""
    return term.split("-")[0] in CONSOLE_TERMS or bool(CONSOLE_TTY.match(tty))


def choose(force: bool | None = None, environ: MutableMapping[str, str] | None = None,
           tty: str | None = None) -> Profile:
    env = os.environ if environ is None else environ
    console = force if force is not None else is_console(
        env.get("TERM", ""), current_tty() if tty is None else tty)
    return CONSOLE if console else MODERN


def apply_environment(profile: Profile, environ: MutableMapping[str, str] | None = None) -> None:
    """Textual's knobs; must run before `import textual`."""
    env = os.environ if environ is None else environ
    env.setdefault("TEXTUAL_FPS", str(profile.fps))
    if profile.console:
        env["TEXTUAL_ANIMATIONS"] = "none"
        env.setdefault("TEXTUAL_COLOR_SYSTEM", "standard")
        env.setdefault("ESCDELAY", "100")


def theme_name(profile: Profile, available: set[str] | list[str]) -> str:
    """textual 8 calls the 16-colour theme ansi-dark; textual 7.5 textual-ansi."""
    if profile.console:
        for name in ("ansi-dark", "textual-ansi"):
            if name in available:
                return name
    return profile.theme if profile.theme in available else "textual-dark"
