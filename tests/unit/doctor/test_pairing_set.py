"""keel doctor on the pairing set: an element keel pair did not add fails,
whatever its timeout, in one line; keel's own waiting port is information."""

from __future__ import annotations

from keel.doctor import checks
from keel.parse.nftlist import Element
from keel.render import nft
from tests.unit.render.test_render import LISTING


def _check(*elements: Element) -> list[checks.Check]:
    state = checks.RulesetState(rendered_sha="a", loaded_sha="a", recorded=LISTING,
                                live=LISTING, pairing=elements)
    return [c for c in checks.check_firewall(state) if c.name == "pairing port"]


def test_a_timeout_longer_than_keel_pair_sets_fails():
    """Was INFO ("closes by itself in 86000 s"): a port held open for a day."""
    (c,) = _check(Element(8080, 86400, 86000))
    assert c.status == checks.FAIL
    assert c.detail == (f"TCP 8080 with a timeout of 86400 s (keel pair sets "
                        f"{nft.PAIRING_LONGEST_S} s at most) in the pairing set: open on the "
                        "WAN, not keel pair's (keel apply removes it)")


def test_keel_pairs_own_port_and_what_is_not_a_port():
    waiting, unread = _check(Element(51820, nft.PAIRING_LONGEST_S, 412),
                             Element(0, None, None, unread='"\x1b[2J"'))
    assert waiting.status == checks.INFO and "closes by itself in 412 s" in waiting.detail
    assert unread.status == checks.FAIL and "\x1b" not in unread.detail
