"""What the fleet changes in an edge's config (keel.fleet.learn): the hub's
routes taken in place of those it gave before, and only those an edge may
take; and what the hub gives each edge (keel.pair.settle.routes_for_edge)."""

from __future__ import annotations

import dataclasses
import ipaddress

import pytest

from keel.config.dump import to_toml
from keel.config.load import parse_config
from keel.fleet.learn import RoutesRefused, edge_learn, hub_peer, learned, what_changed
from keel.pair import settle
from keel.pair.messages import EdgeOffer
from tests.unit.pair.conftest import EDGE2_KEY, EDGE_KEY, HUB_KEY, edge_config, hub_config

A = EdgeOffer("edge-a", EDGE_KEY, "192.168.77.0/24", "203.0.113.2")
B = EdgeOffer("edge-b", EDGE2_KEY, "192.168.78.0/24", "203.0.113.2")
HUB_AT = "203.0.113.2"


def paired():
    """The hub with edge-a, then edge-b; edge-a as it paired (before edge-b)."""
    hub1, grant_a = settle.hub_admit(hub_config(), A, HUB_KEY)
    hub2, _ = settle.hub_admit(hub1, B, HUB_KEY)
    edge_a = settle.edge_join(edge_config(), grant_a, HUB_AT)
    return hub2, edge_a


def test_pairing_marks_the_hub_and_its_edges() -> None:
    hub, edge_a = paired()
    assert [p.fleet for p in hub.wireguard.peer] == ["edge", "edge"]
    assert hub_peer(edge_a).fleet == "hub"
    # and the marks come through the config's text
    again = parse_config(to_toml(edge_a)).config
    assert hub_peer(again) == hub_peer(edge_a)


def test_an_edge_paired_first_learns_the_second_edges_lan_and_forgets_it() -> None:
    hub, edge_a = paired()
    due = settle.routes_for_edge(hub, EDGE_KEY)
    assert due == ("192.168.78.0/24",)
    learnt = edge_learn(edge_a, due)
    assert learned(learnt, hub_peer(learnt)) == due
    assert "192.168.78.0/24" in learnt.wireguard.prefixes and learnt.wireguard.route == "prefixes"
    # the same as pairing again would have given
    _, grant = settle.hub_admit(hub, A, HUB_KEY)
    rejoined = settle.edge_join(edge_a, grant, HUB_AT)
    assert hub_peer(rejoined).allowed_ips == hub_peer(learnt).allowed_ips
    assert rejoined.wireguard.prefixes == learnt.wireguard.prefixes
    # nothing else of the config changed
    assert dataclasses.replace(learnt, wireguard=edge_a.wireguard) == edge_a
    # edge-b unpaired: the hub gives nothing, and edge-a forgets it
    unpaired = settle.remove_peer(hub, "edge-b")
    forgot = edge_learn(learnt, settle.routes_for_edge(unpaired, EDGE_KEY))
    assert learned(forgot, hub_peer(forgot)) == ()
    assert forgot.wireguard == edge_a.wireguard
    assert edge_learn(forgot, ()) is forgot  # no change: the same config


@pytest.mark.parametrize(("routes", "why"), [
    (("8.8.8.0/24",), "not private"),
    (("0.0.0.0/0",), "default route"),
    (("10.0.0.0/7",), "default route"),
    (("192.168.77.0/24",), "this router's LAN"),
    (("192.168.0.0/16",), "this router's LAN"),
    (("10.77.0.0/16",), "the tunnel"),
    (("192.168.78.1/24",), "not a prefix"),
    (("bogus",), "not a prefix"),
    (tuple(f"10.9.{n}.0/24" for n in range(65)), "at most 64"),
])
def test_routes_an_edge_does_not_take_change_nothing(routes, why) -> None:
    _, edge_a = paired()
    with pytest.raises(RoutesRefused, match=why):
        edge_learn(edge_a, routes)


def test_a_route_over_the_hubs_endpoint_or_a_live_wan_is_refused() -> None:
    """The hub's endpoint from the config; the WAN as it is now (a DHCP
    lease) from what the agent reads live (keep_clear)."""
    _, edge_a = paired()
    near = dataclasses.replace(edge_a, wireguard=dataclasses.replace(
        edge_a.wireguard, peer=tuple(dataclasses.replace(p, endpoint="10.99.1.1:51820")
                                     for p in edge_a.wireguard.peer)))
    with pytest.raises(RoutesRefused, match="the hub's address"):
        edge_learn(near, ("10.99.0.0/16",))
    lease = ("this router's WAN subnet", ipaddress.ip_network("172.20.0.0/24"))
    with pytest.raises(RoutesRefused, match="WAN subnet"):
        edge_learn(edge_a, ("172.20.0.0/16",), keep_clear=(lease,))


def test_a_router_without_a_hub_takes_no_routes() -> None:
    with pytest.raises(RoutesRefused, match="no hub"):
        edge_learn(edge_config(), ("192.168.78.0/24",))


def test_the_change_in_words() -> None:
    assert what_changed(("10.1.0.0/24",), ("10.2.0.0/24",)) == "+10.2.0.0/24 -10.1.0.0/24"
    assert what_changed((), ()) == "no change"


def test_the_config_says_which_peer_is_the_hub_once() -> None:
    """One hub, with an endpoint; an edge of a hub's has none; each refusal
    names the key."""
    from keel.config.errors import ConfigError

    _, edge_a = paired()
    hub_table = to_toml(edge_a)
    twice = hub_table + ('\n[[wireguard.peer]]\npublic_key = "' + EDGE2_KEY + '"\n'
                         'allowed_ips = ["10.99.0.0/24"]\nendpoint = "203.0.113.9:51820"\n'
                         'fleet = "hub"\n')
    with pytest.raises(ConfigError, match=r"wireguard.peer\[1\].fleet.*one hub"):
        parse_config(twice)
    hub, _ = paired()
    text = to_toml(hub).replace('fleet = "edge"', 'fleet = "hub"', 1)
    with pytest.raises(ConfigError, match=r"wireguard.peer\[0\].fleet.*no endpoint"):
        parse_config(text)


def test_upgrade_first_marks_an_edge_of_this_hub_only() -> None:
    from keel.config.errors import ConfigError

    hub, edge_a = paired()
    text = to_toml(hub).replace("upgrade_first = false", "upgrade_first = true", 1)
    assert parse_config(text).config.wireguard.peer[0].upgrade_first
    text = to_toml(edge_a).replace("upgrade_first = false", "upgrade_first = true", 1)
    with pytest.raises(ConfigError, match=r"wireguard.peer\[0\].upgrade_first.*no edge"):
        parse_config(text)
