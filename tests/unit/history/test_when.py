"""The moments a user types for `keel history --since/--until`."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from keel.history.when import WhenError, parse_when

NOW = datetime(2026, 11, 28, 21, 30, tzinfo=UTC).timestamp()


@pytest.mark.parametrize(("typed", "expect"), [
    ("now", NOW),
    ("-90s", NOW - 90), ("-15m", NOW - 900), ("-2h", NOW - 7200), ("-7d", NOW - 7 * 86400),
    ("-1w", NOW - 7 * 86400), ("2h", NOW - 7200), ("15m", NOW - 900),
    ("2026-11-24", datetime(2026, 11, 24, tzinfo=UTC).timestamp()),
    ("2026-11-24T21:05", datetime(2026, 11, 24, 21, 5, tzinfo=UTC).timestamp()),
    ("2026-11-24 21:05:30Z", datetime(2026, 11, 24, 21, 5, 30, tzinfo=UTC).timestamp()),
    ("@1764000000", 1764000000.0),
    ("  -2h ", NOW - 7200),
])
def test_the_forms_a_user_types(typed, expect):
    assert parse_when(typed, NOW) == expect


@pytest.mark.parametrize(("typed", "says"), [
    ("yesterday", "not a moment"), ("2026-13-01", "month"), ("-2y", "not a moment"),
    ("-999999999d", "ten years"), ("x" * 100, "too long"), ("2026-11-24T25:00", "hour"),
])
def test_what_is_not_a_moment_is_named(typed, says):
    with pytest.raises(WhenError, match=says):
        parse_when(typed, NOW)


def test_control_characters_are_escaped_in_the_error():
    with pytest.raises(WhenError) as err:
        parse_when("\x1b[2J-2h", NOW)
    assert "\x1b" not in str(err.value)


@given(st.text(max_size=60))
def test_any_text_is_a_moment_or_a_when_error(typed):
    try:
        got = parse_when(typed, NOW)
    except WhenError as err:
        assert not any(ord(c) < 32 and c != "\t" for c in str(err))
    else:
        assert isinstance(got, float)
