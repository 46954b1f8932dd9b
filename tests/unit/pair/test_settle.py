"""What pairing writes into each side's config."""

from __future__ import annotations

import dataclasses
import ipaddress

import pytest

from keel.config.dump import to_toml
from keel.config.load import parse_config
from keel.config.schema import Peer
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


# --- what an edge may claim, what a grant may route (issue 25, item 5) ----------------
@pytest.mark.parametrize("lan", ["8.8.8.0/24", "128.0.0.0/2", "2000::/3", "1.1.1.0/24",
                                 "2001:db8:1::/48"])
def test_a_public_lan_is_refused_unless_the_hubs_operator_named_it(lan):
    with pytest.raises(PairRefused, match=r"is not private|too wide") as err:
        settle.hub_admit(hub_config(), EdgeOffer("e", EDGE_KEY, lan, "x"), HUB_KEY)
    if "too wide" not in str(err.value):
        assert f"keel pair --allow-public {lan}" in str(err.value)
        hub, _ = settle.hub_admit(hub_config(), EdgeOffer("e", EDGE_KEY, lan, "x"), HUB_KEY,
                                  allow_public=(lan,))
        assert lan in hub.wireguard.prefixes
        with pytest.raises(PairRefused, match="is not private"):  # only the one named
            settle.hub_admit(hub_config(), EdgeOffer("e", EDGE_KEY, lan, "x"), HUB_KEY,
                             allow_public=("198.51.100.0/24",))


@pytest.mark.parametrize("lan, ok", [
    ("10.1.0.0/16", True), ("172.16.5.0/24", True), ("192.168.1.0/30", True),
    ("100.64.7.0/24", True), ("fd12:3456:789a::/48", True), ("fd12:3456:789a:1::/64", True),
    ("10.0.0.0/8", False), ("192.168.1.0/31", False), ("fd00::/32", False),
    ("fd12:3456:789a:1::/80", False), ("172.32.0.0/24", False), ("100.128.0.0/24", False),
])
def test_private_lans_of_a_lans_size_are_taken(lan, ok):
    offer = EdgeOffer("e", EDGE_KEY, lan, "x")
    if ok:
        assert lan in settle.hub_admit(hub_config(), offer, HUB_KEY)[0].wireguard.prefixes
    else:
        with pytest.raises(PairRefused, match=r"is not private|a LAN is /"):
            settle.hub_admit(hub_config(), offer, HUB_KEY)


def test_an_offer_with_a_peers_key_but_another_lan_or_name_is_refused():
    """The same key AND the same name and LAN: the same edge pairing again.
    Anything else with that key (which is public) leaves the peer as it is."""
    hub1, _ = settle.hub_admit(hub_config(), A, HUB_KEY)
    for offer in (EdgeOffer("edge-a", EDGE_KEY, "192.168.99.0/24", "203.0.113.2"),
                  EdgeOffer("mallory", EDGE_KEY, "192.168.77.0/24", "203.0.113.2"),
                  EdgeOffer("edge-a", EDGE_KEY, None, "203.0.113.2")):
        with pytest.raises(PairRefused, match=r"public key of peer 'edge-a' with another "
                                              r"name or LAN.*keel peers remove edge-a"):
            settle.hub_admit(hub1, offer, HUB_KEY)
    again, _ = settle.hub_admit(hub1, A, HUB_KEY)
    assert again == hub1
    # a peer written by hand, without a name: never rewritten by pairing
    cfg = hub_config()
    unnamed = dataclasses.replace(cfg, wireguard=dataclasses.replace(
        cfg.wireguard, peer=(Peer(public_key=EDGE_KEY, allowed_ips=("10.77.0.9/32",)),)))
    with pytest.raises(PairRefused, match="a peer without a name"):
        settle.hub_admit(unnamed, EdgeOffer("edge", EDGE_KEY, None, "x"), HUB_KEY)


def _grant(**changes):
    _, grant = settle.hub_admit(hub_config(), A, HUB_KEY)
    return dataclasses.replace(grant, **changes)


def _static_edge():
    cfg = edge_config()
    return dataclasses.replace(cfg, wan=dataclasses.replace(
        cfg.wan, mode="static", address="198.51.100.2/24", gateway="198.51.100.1"))


@pytest.mark.parametrize("changes, keep_clear, why", [
    ({"routes": ("0.0.0.0/0",)}, (), "a default route or nearly"),
    ({"routes": ("128.0.0.0/1",)}, (), "a default route or nearly"),
    ({"routes": ("::/0",)}, (), "a default route or nearly"),
    ({"routes": ("2000::/3",)}, (), "a default route or nearly"),
    ({"routes": ("198.51.100.0/25",)}, (), r"this router's WAN subnet \(198\.51\.100\.0/24\)"),
    ({"routes": ("198.51.100.1/32",)}, (), r"this router's WAN subnet"),
    ({"routes": ("203.0.113.0/24",)}, (), r"the hub's address \(203\.0\.113\.2/32\)"),
    ({"tunnel_address": "198.51.100.7/24", "hub_tunnel": "198.51.100.1"}, (),
     r"WAN subnet .* \(the tunnel 198\.51\.100\.0/24\)"),
    # a DHCP WAN: what keel.pair.run reads live
    ({"routes": ("100.70.0.0/16",)}, (("this router's gateway",
                                       ipaddress.ip_network("100.70.0.1/32")),),
     r"this router's gateway \(100\.70\.0\.1/32\)"),
])
def test_the_edge_refuses_a_grant_that_would_capture_its_way_out(changes, keep_clear, why):
    with pytest.raises(PairRefused, match=why):
        settle.edge_join(_static_edge(), _grant(**changes), "203.0.113.2", keep_clear)


@pytest.mark.parametrize("changes", [
    {"tunnel_address": "10.78.0.2/24"},  # the hub's own address outside the edge's prefix
    {"hub_tunnel": "10.77.0.2"},  # the same address for both
    {"hub_tunnel": "fd00::1"},
    {"tunnel_address": "10.77.0.0/24"},
])
def test_a_grant_that_does_not_hold_together_is_refused_in_one_line(changes):
    """Was a ValueError / TypeError traceback (issue 25, item 8)."""
    with pytest.raises(PairRefused, match=r"does not hold together|not a host address"):
        settle.edge_join(edge_config(), _grant(**changes), "203.0.113.2")


# --- routes the edge takes from a grant: private ones only, unless named --------------
EVERY_PUBLIC_SLASH_8 = tuple(f"{i}.0.0.0/8" for i in range(1, 224)
                             if i not in (10, 127, 192, 198, 203))


@pytest.mark.parametrize("routes, refused", [
    # a default route in pieces, leaving out the edge's WAN, its LAN and the hub's /8s
    (EVERY_PUBLIC_SLASH_8, "1.0.0.0/8"),
    (("192.168.78.0/24", "8.8.8.0/24"), "8.8.8.0/24"),
    (("172.32.0.0/16",), "172.32.0.0/16"),  # next to 172.16.0.0/12, not in it
    (("100.128.0.0/16",), "100.128.0.0/16"),  # past 100.64.0.0/10
    (("2001:db8::/48",), "2001:db8::/48"),
    (("fe80::/64",), "fe80::/64"),
])
def test_the_edge_takes_only_private_routes_from_a_grant(routes, refused):
    """Was accepted: only routes shorter than /8 were refused, so 218 /8s
    (a default route in effect) went into the tunnel (issue 25)."""
    grant = _grant(routes=routes)
    with pytest.raises(PairRefused) as err:
        settle.edge_join(_static_edge(), grant, "203.0.113.2")
    said = str(err.value)
    assert said.startswith(f"the hub's grant routes {refused} into the tunnel: not private")
    assert f"keel pair --allow-public {refused} HUB CODE" in said and "\n" not in said


def test_a_public_route_is_taken_when_the_edges_operator_named_it():
    grant = _grant(routes=("192.168.78.0/24", "8.8.8.0/24"))
    edge = settle.edge_join(_static_edge(), grant, "203.0.113.2",
                            allow_public=("8.8.8.0/24",))
    assert edge.wireguard.prefixes == ("192.168.78.0/24", "8.8.8.0/24")
    # named as that prefix exactly: a wider or another one is not taken
    for named in ("8.8.0.0/16", "8.8.8.0/25"):
        with pytest.raises(PairRefused, match=r"routes 8\.8\.8\.0/24 into the tunnel"):
            settle.edge_join(_static_edge(), grant, "203.0.113.2", allow_public=(named,))
    # and never a default route or the edge's way out, named or not
    for route in ("0.0.0.0/0", "198.51.100.0/24"):
        with pytest.raises(PairRefused, match=r"default route|WAN subnet"):
            settle.edge_join(_static_edge(), _grant(routes=(route,)), "203.0.113.2",
                             allow_public=(route,))


@pytest.mark.parametrize("route", ["10.20.0.0/16", "172.16.5.0/24", "192.168.200.0/24",
                                   "100.64.10.0/24", "fd12:3456:789a::/48"])
def test_private_routes_need_no_word(route):
    edge = settle.edge_join(_static_edge(), _grant(routes=(route,)), "203.0.113.2")
    assert route in edge.wireguard.prefixes


def test_a_public_tunnel_prefix_is_not_a_route_the_private_rule_refuses():
    grant = _grant(tunnel_address="192.0.2.2/24", hub_tunnel="192.0.2.1")
    edge = settle.edge_join(_static_edge(), grant, "203.0.113.2")
    assert "192.0.2.2/24" in edge.wireguard.address


# --- the hub's live networks ----------------------------------------------------------
def test_an_edge_lan_on_the_hubs_live_wan_is_refused():
    """A hub whose WAN is by DHCP (its lease 192.168.1.23/24, behind a home
    router) has that subnet in no config: it comes live, from keel.pair.run
    (was admitted: only the config was read)."""
    hub = hub_config()
    hub = dataclasses.replace(hub, wan=dataclasses.replace(hub.wan, mode="dhcp", address=None,
                                                           gateway=None))
    offer = EdgeOffer("edge", EDGE_KEY, "192.168.1.0/24", "192.168.1.23")
    live = [("the hub's WAN subnet (live)", ipaddress.ip_network("192.168.1.0/24")),
            ("the hub's gateway (live)", ipaddress.ip_network("192.168.1.1/32"))]
    with pytest.raises(PairRefused) as err:
        settle.hub_admit(hub, offer, HUB_KEY, live=live)
    assert str(err.value) == ("the edge's LAN 192.168.1.0/24 overlaps the hub's WAN subnet "
                              "(live) 192.168.1.0/24: give the edge another LAN prefix")
    # a gateway outside the subnet (a /32 lease) is kept clear too
    with pytest.raises(PairRefused, match=r"overlaps the hub's gateway \(live\) 10\.9\.0\.1/32"):
        settle.hub_admit(hub, EdgeOffer("edge", EDGE_KEY, "10.9.0.0/24", "x"), HUB_KEY,
                         live=[("the hub's gateway (live)", ipaddress.ip_network("10.9.0.1"))])
    # another LAN is admitted as before
    new, _ = settle.hub_admit(hub, EdgeOffer("edge", EDGE_KEY, "192.168.77.0/24", "x"),
                              HUB_KEY, live=live)
    assert new.wireguard.prefixes == ("192.168.77.0/24",)
