"""Config messages are safe on a terminal: key names from the file are
quoted JSON-style (controls escaped), a reason never repeats a value, and
the file's name is escaped (keel.shown)."""

from __future__ import annotations

import pytest

from keel.config.errors import ConfigError
from keel.config.load import load_text


def lines(text: str, source: str = "keel.toml") -> list[str]:
    with pytest.raises(ConfigError) as err:
        load_text(text, source)
    return err.value.lines()


def safe(line: str) -> bool:
    return all(" " <= ch <= "~" for ch in line)


def test_odd_key_names_and_values_are_never_shown_raw():
    out = lines('"a\\u001b[2J\\u007f\\u202e" = 1\n'
                'access = {ssh_keys = ["ssh-ed25519\\u001b[31m AAAA"]}\n'
                '[lan]\ndhcp_start = "10.0.0.5%\\u001b]0;x\\u0007"\n')
    assert len(out) == 3 and all(safe(line) for line in out), out
    assert "\\u001b" in out[0] and "\\x1b" in out[1] and "zone id" in out[2]


def test_the_file_s_name_is_escaped():
    out = lines("x = 1\n", "keel\x1b[2J.toml")
    assert out == ["keel\\x1b[2J.toml: x: unknown key"]
