"""The lab's keyboard (tests/lab/keyboard.py): every printable ASCII
character a test may type has keys on a US layout; anything else is refused."""

from __future__ import annotations

import string

import pytest

from tests.lab.keyboard import qcodes
from tests.lab.paths import LabError


def test_every_printable_character_has_keys():
    for char in string.printable.replace("\t", "").replace("\r", "").replace("\x0b", "") \
            .replace("\x0c", ""):
        keys = qcodes(char)
        assert 1 <= len(keys) <= 2 and (len(keys) == 1 or keys[0] == "shift"), (char, keys)


def test_shift_for_capitals_and_symbols_only():
    assert qcodes("K") == ["shift", "k"] and qcodes("k") == ["k"]
    assert qcodes(">") == ["shift", "dot"] and qcodes("\n") == ["ret"]


@pytest.mark.parametrize("char", ["é", "\t", "\x1b"])
def test_no_key_is_refused(char):
    with pytest.raises(LabError, match="no key"):
        qcodes(char)
