"""The server's Content-Length is hostile: a size of ASCII digits (at most 15)
or a one-line refusal, whatever the header holds."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from keel.upgrade.fetch import _length
from keel.upgrade.system import UpgradeError


@pytest.mark.parametrize("text", ["²", "١٢٣", "-1", "1e9", "0x10", "9" * 16, " "])
def test_what_is_no_size_is_refused(text):
    with pytest.raises(UpgradeError, match="is not a size"):
        _length({"Content-Length": text})


def test_a_size_and_no_size():
    assert _length({"Content-Length": " 1234 "}) == 1234
    assert _length({}) is None and _length(None) is None


@given(st.text(max_size=40))
def test_any_header_is_a_size_or_a_refusal_that_shows_it_escaped(text):
    try:
        got = _length({"Content-Length": text})
    except UpgradeError as err:
        assert "\n" not in str(err) and "\x1b" not in str(err)
    else:
        assert got is None or 0 <= got < 10 ** 15
