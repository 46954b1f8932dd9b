"""The forwards' named counters as nft lists them (keel.parse.nftcounters),
on output captured from a real nft in a network namespace
(tests/fixtures/netns/, made by `python -m tests.fixtures.capture_nft`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from keel.parse.nftcounters import MAX_BYTES, MAX_COUNTERS, NftCountersError, parse_counters

NETNS = Path(__file__).resolve().parents[2] / "fixtures" / "netns"


def text(name: str) -> str:
    return (NETNS / name).read_text()


def listing(*counters: object, meta: bool = True) -> str:
    head = [{"metainfo": {"version": "1.0.6", "json_schema_version": 1}}] if meta else []
    return json.dumps({"nftables": head + [{"counter": c} for c in counters]})


def counter(name: str = "fwd-web", packets: object = 3, count: object = 180, **more) -> dict:
    return {"family": "inet", "name": name, "table": "keel", "handle": 2,
            "packets": packets, "bytes": count, **more}


def test_the_captured_counters_after_connections():
    """Three TCP connects to the forward's port, two datagrams to the other's."""
    assert parse_counters(text("nft-list-counters.json")) == {
        "fwd-web": (3, 180), "fwd-game": (2, 58)}


def test_the_captured_counters_just_loaded_and_a_table_without_any():
    assert parse_counters(text("nft-list-counters-zero.json")) == {
        "fwd-web": (0, 0), "fwd-game": (0, 0)}
    assert parse_counters(text("nft-list-counters-none.json")) == {}


def test_the_captured_listing_is_from_a_real_nft():
    assert text("versions.txt").startswith("nftables v")
    no_table = text("nft-list-counters-no-table.txt")
    assert no_table.startswith("exit 1\n") and "No such file or directory" in no_table
    with pytest.raises(NftCountersError, match="not JSON"):
        parse_counters(no_table)


@pytest.mark.parametrize(("given_text", "message"), [
    ("", "not JSON at line 1, column 1"),
    ("[]", 'no "nftables" array'),
    ('{"nftables": {}}', 'no "nftables" array'),
    ('{"nftables": [], "more": 1}', '"nftables" alone'),
    ('{"nftables": [1]}', "not one object of one kind"),
    ('{"nftables": [{"counter": {}, "set": {}}]}', "not one object of one kind"),
    ('{"nftables": [{"table": {"name": "keel"}}]}', "not a counter: table"),
    ('{"nftables": [{"counter": []}]}', "not an object"),
    (listing(counter(name="")), "without a name"),
    (listing(counter(name=7)), "without a name"),
    (listing(counter(name="fwd-\x1b[2J")), r"printable characters: fwd-\\x1b\[2J"),
    (listing(counter(name="x" * 257)), "at most 256"),
    (listing(counter(packets=-1)), "fwd-web: packets is not a count"),
    (listing(counter(packets=True)), "packets is not a count"),
    (listing(counter(packets=1.5)), "packets is not a count"),
    (listing(counter(count=2 ** 64)), "bytes is not a count"),
    (listing(counter(count=None)), "bytes is not a count"),
    (listing({"name": "fwd-web", "packets": 1}), "bytes is not a count"),
    (listing(counter(table="filter")), "not of table inet keel"),
    (listing(counter(family="ip")), "not of table inet keel"),
    (listing(counter(), counter()), "fwd-web listed twice"),
    ('{"nftables": [], "nftables": []}', "names nftables twice"),
    ("[" * 100_000, "nested too deeply|not JSON"),
    ('{"nftables": [{"counter": {"name": "a", "packets": ' + "9" * 5000 + "}}]}", "not JSON"),
    ('{"nftables": NaN}', 'no "nftables" array'),
    (" " * (MAX_BYTES + 1), "longer than"),
])
def test_what_is_not_a_listing_of_keel_s_counters_says_why(given_text, message):
    with pytest.raises(NftCountersError, match=message):
        parse_counters(given_text)


def test_not_text_at_all():
    with pytest.raises(NftCountersError, match="not text but bytes"):
        parse_counters(b'{"nftables": []}')  # type: ignore[arg-type]


def test_at_most_so_many_counters():
    many = [counter(name=f"c{i}", packets=i, count=i) for i in range(MAX_COUNTERS)]
    assert len(parse_counters(listing(*many))) == MAX_COUNTERS
    with pytest.raises(NftCountersError, match=f"more than {MAX_COUNTERS} counters"):
        parse_counters(listing(*many, counter(name="one-more"), meta=False))


def test_the_biggest_count_and_the_listing_without_metainfo():
    assert parse_counters(listing(counter(packets=2 ** 64 - 1, count=0), meta=False)) == {
        "fwd-web": (2 ** 64 - 1, 0)}
    bare = {"name": "fwd-web", "packets": 1, "bytes": 2}  # no family or table: still keel's
    assert parse_counters(listing(bare)) == {"fwd-web": (1, 2)}


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=10), inner,
                                                                max_size=5),
    max_leaves=30)
FIELDS = st.dictionaries(
    st.sampled_from(["name", "packets", "bytes", "family", "table", "handle", "x"]),
    JSON | st.integers(-1, 2 ** 65) | st.sampled_from(["fwd-web", "inet", "keel"]),
    max_size=7)


def _only_our_error(given_text: str) -> None:
    try:
        found = parse_counters(given_text)
    except NftCountersError as err:
        assert str(err) and "\n" not in str(err)
        return
    assert all(isinstance(n, str) and n.isprintable() for n in found)
    assert all(0 <= p < 2 ** 64 and 0 <= b < 2 ** 64 for p, b in found.values())


@settings(max_examples=300)
@given(st.text(max_size=400))
def test_any_text_raises_nothing_but_the_parser_s_error(given_text):
    _only_our_error(given_text)


@settings(max_examples=300)
@given(JSON)
def test_any_json_raises_nothing_but_the_parser_s_error(value):
    _only_our_error(json.dumps(value))
    _only_our_error(json.dumps({"nftables": value}))


@settings(max_examples=300)
@given(st.lists(st.one_of(FIELDS.map(lambda c: {"counter": c}), JSON.map(
    lambda v: {"metainfo": v}), st.dictionaries(st.text(max_size=8), JSON, max_size=2)),
    max_size=6))
def test_listings_of_odd_counters_raise_nothing_but_the_parser_s_error(entries):
    _only_our_error(json.dumps({"nftables": entries}))
