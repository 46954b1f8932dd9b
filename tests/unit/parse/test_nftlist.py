"""The pairing set's elements as `nft -j` lists them, and which of them are
not keel pair's (keel.parse.nftlist)."""

from __future__ import annotations

import json

import pytest

from keel.parse import nftlist
from keel.parse.nftlist import Element


def listed(*elems) -> str:
    return json.dumps({"nftables": [{"set": {"name": "pairing", "elem": list(elems)}}]})


def test_an_element_that_is_not_a_port_is_kept_to_be_seen():
    """Was skipped: an element keel could not read was as good as none."""
    found = nftlist.set_elements(listed({"elem": {"val": "ssh", "timeout": 30}}, 70000,
                                        {"elem": {"val": True}}, 8080))
    assert [(e.port, e.timeout_s, e.unread) for e in found] == [
        (0, 30, '{"elem": {"val": "ssh", "timeout": 30}}'), (0, None, "70000"),
        (0, None, '{"elem": {"val": true}}'), (8080, None, None)]


@pytest.mark.parametrize("element, why", [
    (Element(51820, 615, 412), None),
    (Element(51820, 1, 1), None),
    (Element(8080, None, None), "TCP 8080 with no timeout"),
    (Element(8080, 616, 600), "TCP 8080 with a timeout of 616 s (keel pair sets 615 s at most)"),
    (Element(8080, 0, None), "TCP 8080 with a timeout of 0 s (keel pair sets 615 s at most)"),
    (Element(0, 30, 20, unread='"\x1b[2J"'), 'an element that is not a port ("\\x1b[2J")'),
])
def test_what_keel_pair_did_not_add_in_one_line(element, why):
    assert nftlist.stray(element, 615) == why
