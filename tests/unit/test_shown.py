"""keel.shown: outside text made safe for a terminal."""

from hypothesis import given, settings
from hypothesis import strategies as st

from keel.shown import shown


def test_escape_sequences_and_controls_are_escaped() -> None:
    assert shown("\x1b[2Jhello\r\nthere") == "\\x1b[2Jhello\\x0d\\x0athere"
    assert shown("a\u202eb\u2028c\x85d") == "a\\u202eb\\u2028c\\x85d"
    assert shown("back\\slash") == "back\\\\slash"


def test_plain_text_is_kept() -> None:
    assert shown("alice@laptop 10.0.0.1 héllo") == "alice@laptop 10.0.0.1 héllo"


def test_limit_cuts_the_escaped_form() -> None:
    assert shown("x" * 20, limit=10) == "xxxxxxx..."


@settings(max_examples=2000)
@given(st.text())
def test_no_control_character_ever_comes_out(text: str) -> None:
    out = shown(text)
    assert all(ch.isprintable() for ch in out)
    assert "\x1b" not in out and "\n" not in out and "\r" not in out
