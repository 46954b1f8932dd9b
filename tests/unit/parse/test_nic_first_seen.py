"""keel.parse.nic_first_seen: the record of the NIC each role was first
found on, read strictly; whatever the file holds, nothing raises."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from keel.parse.nic_first_seen import FirstSeen, dump_first_seen, parse_first_seen, updated


def test_a_record_round_trips_and_is_kept_while_the_spec_is():
    first = updated({}, "wan.interface", "eth0", "mac:52:54:00:00:05:01", "eth0", "e1000")
    assert parse_first_seen(dump_first_seen(first)) == first
    # the kernel's eth0 is now another NIC: the record still says the first one
    again = updated(first, "wan.interface", "eth0", "mac:52:54:00:00:03:01", "eth0", "8139cp")
    assert again == first
    # the config names another port: that one is recorded
    moved = updated(first, "wan.interface", "mac:52:54:00:00:03:01", "mac:52:54:00:00:03:01",
                    "eth1", "8139cp")
    assert moved["wan.interface"].name == "eth1"
    assert updated(first, "wireguard.interface", "wg0", "x", "wg0", "") == first


def test_what_is_not_a_record_is_none():
    for bad in ("", "[]", "{", '{"wan.interface": 1}', '{"wan.interface": {"spec": "eth0"}}',
                "x" * 5000, '{"wan.interface": {"spec": "a\\u001b", "identity": "", '
                '"name": "", "driver": ""}}'):
        assert parse_first_seen(bad) == {}


json_values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=20)),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(
        st.sampled_from(["wan.interface", "lan.interface", "spec", "identity", "name", "driver",
                         "x"]), inner, max_size=5)), max_leaves=20)


@given(st.one_of(st.text(max_size=300), json_values.map(json.dumps)))
def test_any_text_is_a_record_or_none(text):
    found = parse_first_seen(text)
    assert all(isinstance(v, FirstSeen) and v.spec.isprintable() for v in found.values())
