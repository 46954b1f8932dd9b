"""The console profile: chosen from TERM and the tty, and what it sets."""

from __future__ import annotations

from keel.ui.profile import CONSOLE, MODERN, apply_environment, choose, is_console, theme_name


def test_console_profile_is_chosen_from_term_and_tty():
    assert is_console("linux", "/dev/pts/0")
    assert is_console("vt220", "")
    assert is_console("xterm-256color", "/dev/tty1")
    assert is_console("xterm", "/dev/ttyS0")
    assert not is_console("xterm-256color", "/dev/pts/3")
    assert choose(environ={"TERM": "linux"}, tty="/dev/pts/1") is CONSOLE
    assert choose(environ={"TERM": "xterm"}, tty="/dev/pts/1") is MODERN
    assert choose(False, environ={"TERM": "linux"}, tty="/dev/tty1") is MODERN
    assert choose(True, environ={"TERM": "xterm"}, tty="/dev/pts/1") is CONSOLE
    env: dict[str, str] = {}
    apply_environment(CONSOLE, env)
    assert env["TEXTUAL_ANIMATIONS"] == "none" and int(env["TEXTUAL_FPS"]) <= 10
    assert not CONSOLE.mouse and CONSOLE.data_interval >= 1.0
    assert theme_name(CONSOLE, {"textual-ansi", "textual-dark"}) == "textual-ansi"
    assert theme_name(CONSOLE, {"ansi-dark", "textual-ansi"}) == "ansi-dark"
