"""Fuzzing what keel takes from outside (issue 25, item 10): random bytes and
Unicode, and valid values with odd characters put in, fed to the SSH key
parser and to every address, prefix and endpoint key of the schema (read from
the schema: keel.config.describe.walk, so a key added later is fuzzed too).

For every case: no exception but the documented one (KeyLineError,
ConfigError; a check returns its reason), nothing accepted that holds a
control character, white space, '%' or a character outside ASCII, and no
message with a character a terminal would act on.

Cases per run (max_examples): the key parser 3 x 1200 (random bytes, random
Unicode, real keys mutated); each address key's check 500 (11 keys today);
the whole loader 700 documents, an odd value at one address key each.
About 15 s in all."""

from __future__ import annotations

import copy
import unicodedata

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from keel.config.checks import by_rule
from keel.config.describe import walk
from keel.config.errors import ConfigError
from keel.config.load import load_text
from keel.parse.ssh_key import MAX_LINE, KeyLineError, SshKey, parse_public_key
from tests.unit.config.test_ip_text import BASE, _toml, address_keys, put

UNSAFE = frozenset({"Cc", "Cf", "Zl", "Zp", "Cs", "Co", "Cn"})


def fuzz(examples: int) -> settings:
    return settings(max_examples=examples, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])

# characters that have fooled a parser or a terminal somewhere
ODD = [*"%\n\r\t \x0b\x0c\x1c\x1d\x1e\x1f\x85\u2028\u2029\x00\x1b\x7f\u00a0\ufeff\u202e",
       *"\u3000/[]:.=+@\\\"'\uff11\u0661\ud800"]
odd_text = st.text(st.one_of(st.sampled_from(ODD), st.characters()), min_size=1, max_size=6)


def terminal_safe(text: str) -> bool:
    """What keel.shown lets through: no control, format or separator
    character, no surrogate, private-use or unassigned code point."""
    return all(ch == " " or (ch.isprintable() and unicodedata.category(ch) not in UNSAFE)
               for ch in text)


def is_clean(text: str) -> bool:
    """Printable ASCII, no space."""
    return all("!" <= ch <= "~" for ch in text)


def mutated(valid: list[str]) -> st.SearchStrategy[str]:
    """A valid value with odd text put in, or put over part of it, or cut."""
    def mutate(draw: st.DrawFn) -> str:
        base = draw(st.sampled_from(valid))
        i = draw(st.integers(0, len(base)))
        j = draw(st.integers(i, len(base)))
        return base[:i] + draw(st.one_of(odd_text, st.just(""))) + base[j:]
    return st.composite(lambda draw: mutate(draw))()


# --- the SSH key parser ------------------------------------------------------------

KEYS = [
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAINm9xjg604uF+6YtQtjWmk9KXScj3nPUWJnSczSqFTc1 alice@laptop",
    "ecdsa-sha2-nistp256 AAAAE2VjZHNhLXNoYTItbmlzdHAyNTYAAAAIbmlzdHAyNTYAAABBBMah6NJnKFxE"
    "BzXywfNiexGI4aMDIi4UkJTDN07nt4kjtM+ReeVsf0s6WWtD2myYv5GCGn9rGAuljn/DglfDOdY= d",
]


def check_key(data: str | bytes) -> None:
    try:
        key = parse_public_key(data)
    except KeyLineError as err:
        assert str(err) and terminal_safe(str(err)), str(err)
        return
    text = data.decode("ascii") if isinstance(data, bytes) else data
    assert isinstance(key, SshKey)
    assert all(" " <= ch <= "~" for ch in text), text  # nothing odd taken
    assert all(" " <= ch <= "~" for ch in key.line) and len(key.line) <= MAX_LINE
    assert parse_public_key(key.line) == key


@fuzz(1200)
@given(st.binary(max_size=MAX_LINE + 64))
def test_key_parser_random_bytes(data: bytes) -> None:
    check_key(data)


@fuzz(1200)
@given(st.text(max_size=300))
def test_key_parser_random_unicode(text: str) -> None:
    check_key(text)


@fuzz(1200)
@given(mutated(KEYS))
def test_key_parser_mutated_keys(text: str) -> None:
    check_key(text)


# --- every address key of the schema -------------------------------------------------

VALID = {
    "address": ["203.0.113.1", "fe80::1", "2001:db8::1", "::ffff:192.0.2.1", "10.0.0.255"],
    "interface_address": ["10.77.0.2/24", "fd00::2/64", "203.0.113.7/32"],
    "prefix": ["172.31.77.0/24", "fd00::/64", "0.0.0.0/0", "::/0"],
    "endpoint": ["203.0.113.2:51820", "[2001:db8::1]:51820", "hub.example.com:51820"],
    "interface_address6": ["2001:db8:100:1::1/64", "fd00:77::1/64"],
    "prefix6": ["2001:db8:200::/56", "fd00:77::/48", "2001:db8::/32"],
}
RULES = {info.path: (info.item or info.rule) for info in walk()}
FIELDS = address_keys()


def values_for(syntax: str) -> st.SearchStrategy[str]:
    return st.one_of(st.text(max_size=60), mutated(VALID[syntax]),
                     st.binary(max_size=60).map(lambda b: b.decode("latin-1")))


@pytest.mark.parametrize(("path", "syntax"), FIELDS)
def test_every_address_key_takes_no_odd_character(path: str, syntax: str) -> None:
    rule = RULES[path]

    @fuzz(500)
    @given(values_for(syntax))
    def run(value: str) -> None:
        reason = by_rule(rule, value)
        if reason is None:
            assert is_clean(value) and "%" not in value, (path, value)
        else:
            assert terminal_safe(reason), reason

    run()


@fuzz(700)
@given(st.sampled_from(FIELDS).flatmap(
    lambda field: st.tuples(st.just(field[0]), values_for(field[1]))))
def test_the_loader_takes_no_odd_address(case: tuple[str, str]) -> None:
    path, value = case
    data = copy.deepcopy(BASE)
    where = put(data, path, value)
    try:
        load_text(_toml(data), "fuzz.toml")
    except ConfigError as err:
        assert all(terminal_safe(line) for line in err.lines()), err.lines()
        return
    assert is_clean(value) and "%" not in value, (where, value)
