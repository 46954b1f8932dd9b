"""What pairing writes into each side's config."""

from __future__ import annotations

import ipaddress

import pytest

from keel.config.dump import to_toml
from keel.config.load import parse_config
from keel.pair import settle
from keel.pair.errors import PairRefused
from keel.pair.messages import EdgeOffer
from tests.unit.pair.conftest import EDGE2_KEY, EDGE_KEY, HUB_KEY, edge_config, hub_config

A = EdgeOffer("edge-a", EDGE_KEY, "192.168.77.0/24", "203.0.113.2")
B = EdgeOffer("edge-b", EDGE2_KEY, "192.168.78.0/24", "203.0.113.2")


def test_the_second_edge_gets_the_next_address_and_the_first_ones_lan_as_a_route():
    hub1, grant_a = settle.hub_admit(hub_config(), A, HUB_KEY)
    hub2, grant_b = settle.hub_admit(hub1, B, HUB_KEY)
    assert (grant_a.tunnel_address, grant_b.tunnel_address) == ("10.77.0.2/24", "10.77.0.3/24")
    assert grant_a.routes == () and grant_b.routes == ("192.168.77.0/24",)
    assert hub2.wireguard.route == "prefixes"
    assert hub2.wireguard.prefixes == ("192.168.77.0/24", "192.168.78.0/24")
    assert hub2.firewall.forward_between_peers
    assert [p.name for p in hub2.wireguard.peer] == ["edge-a", "edge-b"]


def test_pairing_again_keeps_the_peer_and_its_address_and_gives_the_new_routes():
    hub1, _ = settle.hub_admit(hub_config(), A, HUB_KEY)
    hub2, _ = settle.hub_admit(hub1, B, HUB_KEY)
    hub3, grant = settle.hub_admit(hub2, A, HUB_KEY)
    assert grant.tunnel_address == "10.77.0.2/24" and grant.routes == ("192.168.78.0/24",)
    assert hub3.wireguard.peer == hub2.wireguard.peer  # the same edge: the same peer
    assert hub3.wireguard.prefixes == ("192.168.77.0/24", "192.168.78.0/24")
    # and the edge, paired again, learns the other edge's LAN
    edge = settle.edge_join(edge_config(), settle.hub_admit(hub1, A, HUB_KEY)[1], "203.0.113.2")
    again = settle.edge_join(edge, grant, "203.0.113.2")
    assert again.wireguard.prefixes == ("192.168.78.0/24",)
    (peer,) = again.wireguard.peer
    assert peer.allowed_ips[0] == "10.77.0.1/32" and peer.allowed_ips[-1] == "192.168.78.0/24"
    tunnel = [ipaddress.ip_network(a) for a in peer.allowed_ips[:-1]]
    assert sum(n.num_addresses for n in tunnel) == 256  # the whole prefix, the hub first
    assert all(n.subnet_of(ipaddress.ip_network("10.77.0.0/24")) for n in tunnel)


def test_two_edges_with_the_same_host_name_get_different_peer_names():
    hub1, _ = settle.hub_admit(hub_config(), EdgeOffer("edge", EDGE_KEY, None, "x"), HUB_KEY)
    _, grant = settle.hub_admit(hub1, EdgeOffer("edge", EDGE2_KEY, None, "x"), HUB_KEY)
    assert grant.edge_name == "edge-2"


def test_every_address_of_the_prefix_is_handed_out_then_it_is_full():
    hub = hub_config("10.77.0.1/29")  # 6 hosts: the hub and 5 edges
    keys = ["A" * 42 + f"{c}=" for c in "AEIMQ"]
    for n, key in enumerate(keys):
        hub, grant = settle.hub_admit(hub, EdgeOffer(f"e{n}", key, None, "x"), HUB_KEY)
    assert grant.tunnel_address == "10.77.0.6/29"
    with pytest.raises(PairRefused, match=r"10\.77\.0\.0/29 is full \(6 addresses"):
        settle.hub_admit(hub, EdgeOffer("late", "B" * 42 + "A=", None, "x"), HUB_KEY)


@pytest.mark.parametrize("lan, why", [
    ("10.77.0.0/16", "the hub's tunnel 10.77.0.0/24"),
    ("203.0.113.0/25", "the hub's WAN subnet 203.0.113.0/24"),
])
def test_an_edge_lan_that_overlaps_the_hubs_own_networks_is_refused(lan, why):
    with pytest.raises(PairRefused) as err:  # even a public one the operator allowed
        settle.hub_admit(hub_config(), EdgeOffer("e", EDGE_KEY, lan, "x"), HUB_KEY,
                         allow_public=(lan,))
    assert why in str(err.value)


def test_a_hub_without_a_tunnel_says_what_to_set():
    cfg = edge_config()
    with pytest.raises(PairRefused, match=r"no tunnel: set wireguard\.enabled"):
        settle.hub_admit(cfg, A, HUB_KEY)


def test_an_edge_with_the_hubs_own_key_is_refused():
    with pytest.raises(PairRefused, match="the hub's own public key"):
        settle.hub_admit(hub_config(), EdgeOffer("e", HUB_KEY, None, "x"), HUB_KEY)


def test_the_edges_config_round_trips_and_routes_only_what_the_hub_gave():
    _, grant = settle.hub_admit(settle.hub_admit(hub_config(), B, HUB_KEY)[0], A, HUB_KEY)
    edge = settle.edge_join(edge_config(), grant, "2001:db8::7")
    assert parse_config(to_toml(edge)).config == edge
    (peer,) = edge.wireguard.peer
    assert peer.endpoint == "[2001:db8::7]:51820"
    assert edge.wireguard.route == "prefixes" and edge.wireguard.prefixes == ("192.168.78.0/24",)


def test_an_edge_whose_lan_the_hub_would_route_refuses_the_grant():
    _, grant = settle.hub_admit(hub_config(), B, HUB_KEY)
    _, grant = settle.hub_admit(settle.hub_admit(hub_config(), B, HUB_KEY)[0], A, HUB_KEY)
    with pytest.raises(PairRefused, match="the edge's config would not be valid"):
        settle.edge_join(edge_config("192.168.78.1/24"), grant, "203.0.113.2")


def test_removing_a_peer_takes_its_routes_too():
    hub, _ = settle.hub_admit(settle.hub_admit(hub_config(), A, HUB_KEY)[0], B, HUB_KEY)
    after = settle.remove_peer(hub, "edge-a")
    assert [p.name for p in after.wireguard.peer] == ["edge-b"]
    assert after.wireguard.prefixes == ("192.168.78.0/24",)
    assert settle.remove_peer(after, "edge-b").wireguard.route == "none"
    with pytest.raises(PairRefused, match=r"no peer named 'nope' \(peers: edge-a, edge-b\)"):
        settle.remove_peer(hub, "nope")


def test_keel_peers_on_the_edge_shows_the_hub_and_the_lans_behind_it():
    from keel.pair.peers import peer_rows, table

    _, grant = settle.hub_admit(settle.hub_admit(hub_config(), B, HUB_KEY)[0], A, HUB_KEY)
    edge = settle.edge_join(edge_config(), grant, "203.0.113.2")
    (row,) = peer_rows(edge, {}, 0.0)
    assert (row.name, row.tunnel, row.endpoint, row.routes) == (
        "hub", "10.77.0.1", "203.0.113.2:51820", ("192.168.78.0/24",))
    assert table([row])[1].split() == ["hub", "10.77.0.1", "203.0.113.2:51820", "never",
                                       "192.168.78.0/24"]
