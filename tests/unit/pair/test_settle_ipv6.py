"""IPv6 by pairing: a hub with a routed prefix hands each edge with a LAN a
/64 of it; the edge puts it on its LAN and sends its IPv6 through the hub."""

from __future__ import annotations

import dataclasses
import ipaddress

import pytest
from hypothesis import given
from hypothesis import strategies as st

from keel.config.dump import to_toml
from keel.config.load import parse_config
from keel.pair import ipv6, settle
from keel.pair.errors import PairRefused
from keel.pair.messages import EdgeOffer, as_message, grant_from
from tests.unit.pair.conftest import EDGE2_KEY, EDGE_KEY, HUB_KEY, edge_config, hub_config

ROUTED = "2001:db8:200::/56"
A = EdgeOffer("edge-a", EDGE_KEY, "192.168.77.0/24", "203.0.113.2")
B = EdgeOffer("edge-b", EDGE2_KEY, "192.168.78.0/24", "203.0.113.2")


def routed_hub(prefix: str = ROUTED):
    cfg = hub_config()
    return dataclasses.replace(cfg, ipv6=dataclasses.replace(cfg.ipv6, routed_prefix=prefix))


def test_each_edge_gets_the_next_free_64_the_first_stays_the_hubs():
    hub1, grant_a = settle.hub_admit(routed_hub(), A, HUB_KEY)
    hub2, grant_b = settle.hub_admit(hub1, B, HUB_KEY)
    assert (grant_a.lan6, grant_b.lan6) == ("2001:db8:200:1::/64", "2001:db8:200:2::/64")
    a, b = hub2.wireguard.peer
    assert "2001:db8:200:1::/64" in a.allowed_ips and "2001:db8:200:2::/64" in b.allowed_ips
    # routed into the tunnel by the hub like an edge's IPv4 LAN
    assert "2001:db8:200:2::/64" in hub2.wireguard.prefixes
    # the other edge's /64 is no route the edge is told of (its IPv6 goes to the hub anyway)
    assert grant_b.routes == ("192.168.77.0/24",)


def test_pairing_again_keeps_the_edges_64():
    hub1, _ = settle.hub_admit(routed_hub(), A, HUB_KEY)
    hub2, _ = settle.hub_admit(hub1, B, HUB_KEY)
    hub3, grant = settle.hub_admit(hub2, A, HUB_KEY)
    assert grant.lan6 == "2001:db8:200:1::/64"
    assert hub3.wireguard.peer == hub2.wireguard.peer


def test_a_removed_edges_64_is_handed_out_again():
    hub1, _ = settle.hub_admit(routed_hub(), A, HUB_KEY)
    hub2, _ = settle.hub_admit(hub1, B, HUB_KEY)
    gone = settle.remove_peer(hub2, "edge-a")
    assert "2001:db8:200:1::/64" not in gone.wireguard.prefixes
    third = EdgeOffer("edge-c", "c" * 43 + "=", "192.168.79.0/24", "203.0.113.2")
    _, grant = settle.hub_admit(gone, third, HUB_KEY)
    assert grant.lan6 == "2001:db8:200:1::/64"


def test_an_edge_without_a_lan_gets_no_64():
    _, grant = settle.hub_admit(routed_hub(), dataclasses.replace(A, lan=None), HUB_KEY)
    assert grant.lan6 is None
    assert "lan6" not in as_message(grant)  # edges that do not know the field still pair


def test_a_hub_without_a_routed_prefix_hands_out_none():
    _, grant = settle.hub_admit(hub_config(), A, HUB_KEY)
    assert grant.lan6 is None


def test_a_full_prefix_is_refused_in_words():
    hub = routed_hub("2001:db8:200::/63")  # two /64s: the hub's own, and one
    hub1, _ = settle.hub_admit(hub, A, HUB_KEY)
    with pytest.raises(PairRefused, match=r"no /64 of the routed prefix 2001:db8:200::/63"):
        settle.hub_admit(hub1, B, HUB_KEY)


def test_the_edge_puts_the_64_on_its_lan_and_sends_its_ipv6_to_the_hub():
    _, grant = settle.hub_admit(routed_hub(), A, HUB_KEY)
    edge = settle.edge_join(edge_config(), grant, "203.0.113.2")
    assert edge.lan.address6 == "2001:db8:200:1::1/64"
    (peer,) = edge.wireguard.peer
    assert "::/0" in peer.allowed_ips
    assert "::/0" not in edge.wireguard.prefixes  # routed by source, not for the edge itself
    # and it is a config the loader takes, written and read back
    assert parse_config(to_toml(edge)).config == edge


def test_the_message_round_trips():
    _, grant = settle.hub_admit(routed_hub(), A, HUB_KEY)
    assert grant_from(as_message(grant)) == grant


@pytest.mark.parametrize(("lan6", "why"), [
    ("2001:db8:200::/56", "a /64"),
    ("2001:db8:200:1::/56", "not an IPv6 prefix"),
    ("fe80::/64", "neither global unicast"),
    ("ff02::/64", "neither global unicast"),
])
def test_the_edge_refuses_a_64_that_is_not_one(lan6, why):
    _, grant = settle.hub_admit(routed_hub(), A, HUB_KEY)
    with pytest.raises(PairRefused, match=why):
        settle.edge_join(edge_config(), dataclasses.replace(grant, lan6=lan6), "203.0.113.2")


@given(st.integers(min_value=0, max_value=(1 << 64) - 1), st.integers(min_value=0, max_value=128))
def test_edge_lan6_takes_only_global_or_ula_64s(bits, length):
    text = f"{ipaddress.IPv6Address(bits << 64)}/{length}"
    try:
        net, address = ipv6.edge_lan6(text)
    except PairRefused:
        return
    assert net.prefixlen == 64 and ipaddress.IPv6Interface(address).ip == \
        net.network_address + 1
    assert net.subnet_of(ipaddress.IPv6Network("2000::/3")) or \
        net.subnet_of(ipaddress.IPv6Network("fc00::/7"))
