import re

import pytest

from keel.pair.code import new_code, normalize
from keel.pair.errors import PairError


def test_a_new_code_is_eight_digits_in_two_groups_and_differs_each_time():
    codes = {new_code() for _ in range(50)}
    assert all(re.fullmatch(r"\d{4}-\d{4}", c) for c in codes)
    assert len(codes) > 45


@pytest.mark.parametrize("typed", ["1234-5678", "12345678", " 1234 5678 ", "1234 - 5678"])
def test_typed_codes_are_read_with_spaces_and_dashes(typed):
    assert normalize(typed) == "12345678"


@pytest.mark.parametrize("typed, why", [
    ("1234-567", "8 digits; 7 were typed"),
    ("1234-56789", "8 digits; 9 were typed"),
    ("1234-567x", "digits only"),
    ("\uff11" * 8, "digits only"),  # full-width digits: isdigit() but not ASCII
    ("", "8 digits; 0 were typed"),
])
def test_a_mistyped_code_says_what_is_wrong_without_echoing_it(typed, why):
    with pytest.raises(PairError) as err:
        normalize(typed)
    assert why in str(err.value)
    assert typed.strip() not in str(err.value) or not typed.strip()
