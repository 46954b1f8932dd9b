"""IPv6 in keel.toml, the rules between keys (keel.config.ipv6_relations and
the IPv6 side of the tunnel's, the subnets' and the forwards' rules): each
good and bad, through the loader with real keel.toml text, its key path and
its reason; and the model built from it (keel.model.from_config)."""

from __future__ import annotations

import pytest

from keel.config import paths
from keel.config.load import load_text
from keel.model import model_from_config
from keel.model import router as m
from tests.unit.config.test_config_ipv6_syntax import EDGE6, HUB6
from tests.unit.config.test_forwards import only, problems

KEY_C = "YBD0vc5wBNbTSDr/YHNGi7o7ZbvVSZ0ULLdGFd1MHGs="
HUB_PEER = 'allowed_ips = ["10.77.0.1/32", "::/0"]'



def peer(key: str, allowed: str, name: str = "", endpoint: str = "") -> str:
    return ("\n[[wireguard.peer]]\n" + (f'name = "{name}"\n' if name else "")
            + f'public_key = "{key}"\nallowed_ips = [{allowed}]\n'
            + (f'endpoint = "{endpoint}"\n' if endpoint else ""))


def forward(to: str, port: int | str = 8080, via: str | None = "edge", name: str = "web",
            protocol: str = "tcp", extra: str = "") -> str:
    port_text = str(port) if isinstance(port, int) else f'"{port}"'
    via_line = f'via = "{via}"\n' if via is not None else ""
    return (f'\n[[forward]]\nname = "{name}"\nprotocol = "{protocol}"\nport = {port_text}\n'
            f'to = "{to}"\n{via_line}{extra}')


# --- wan.ipv6 ------------------------------------------------------------------------------


def test_wan_ipv6_off_with_a_static_ipv6_wan_is_refused():
    text = ("[wan]\nmode = 'static'\naddress = '2001:db8::2/64'\ngateway = 'fe80::1'\n"
            "ipv6 = 'off'\n")
    assert only(text) == ('wan.ipv6: off (no IPv6 on the WAN), but wan.address or wan.gateway '
                          'is IPv6: set ipv6 = "auto"')
    assert load_text(text.replace("'off'", "'auto'")).wan.ipv6 == "auto"
    v4 = "[wan]\nmode = 'static'\naddress = '203.0.113.2/24'\ngateway = '203.0.113.1'\n"
    assert load_text(v4 + "ipv6 = 'off'\n").wan.ipv6 == "off"


def test_ipv6_from_wan_without_wan_ipv6_is_no_error_and_has_no_effect():
    cfg = load_text("[wan]\nipv6 = 'off'\nipv6_pd_length = 60\n[lan]\nipv6_from_wan = true\n")
    model = model_from_config(cfg)
    assert (model.wans[0].ipv6, model.wans[0].ipv6_pd_length) == ("off", 60)
    assert model.lans[0].ipv6_from_wan is False
    auto = model_from_config(load_text("[lan]\n"))
    assert (auto.wans[0].ipv6, auto.wans[0].ipv6_pd_length) == ("auto", 56)
    assert auto.lans[0].ipv6_from_wan is True and auto.lans[0].address6 is None
    off = model_from_config(load_text("[lan]\nipv6_from_wan = false\n"))
    assert off.lans[0].ipv6_from_wan is False


# --- lan.address6: routed through the tunnel ------------------------------------------------


def test_the_edge_with_a_static_64_loads():
    cfg = load_text(EDGE6)
    [lan] = model_from_config(cfg).lans
    assert (lan.address, lan.address6, lan.ipv6_from_wan) == (
        "192.168.77.1/24", "2001:db8:100:1::1/64", True)


def test_address6_needs_the_tunnel():
    text = EDGE6.replace("enabled = true", "enabled = false")
    assert only(text) == (
        "lan.address6: routed through the tunnel from the hub's routed prefix: needs "
        "wireguard.enabled = true and the hub as a [[wireguard.peer]] with an endpoint and "
        "\"::/0\" in its allowed_ips (the LAN's IPv6 comes and goes through it)")


def test_address6_needs_default6_in_the_hubs_allowed_ips():
    text = EDGE6.replace(HUB_PEER, 'allowed_ips = ["10.77.0.1/32"]')
    assert only(text) == (
        "lan.address6: routed through the tunnel: needs the hub as a [[wireguard.peer]] with "
        "an endpoint and \"::/0\" in its allowed_ips (the LAN's IPv6 comes and goes through "
        "it); add \"::/0\" to wireguard.peer[0].allowed_ips")


def test_address6_needs_a_peer_with_an_endpoint():
    text = EDGE6.replace('endpoint = "203.0.113.2:51820"\n', "")
    assert only(text).endswith("; no peer has an endpoint")


def test_address6_names_the_candidates_when_several_peers_have_an_endpoint():
    text = EDGE6.replace(HUB_PEER, 'allowed_ips = ["10.77.0.1/32"]') + peer(
        KEY_C, '"10.77.0.3/32"', endpoint="198.51.100.2:51820")
    assert only(text).endswith('; add "::/0" to the allowed_ips of the hub among '
                               "wireguard.peer[0], wireguard.peer[1]")


def test_address6_goes_to_one_hub():
    text = EDGE6 + peer(KEY_C, '"10.77.0.3/32", "::/0"', endpoint="198.51.100.2:51820")
    found = problems(text)
    assert ("lan.address6: routed through the tunnel to one hub, but wireguard.peer[0], "
            "wireguard.peer[1] each have an endpoint and \"::/0\" in allowed_ips") in found
    assert "wireguard.peer[1].allowed_ips[1]: overlaps ::/0 of wireguard.peer[0]" in found


def test_a_peer_may_not_hold_the_lans_64():
    """Other than by ::/0: is, inside or containing the LAN's /64 (the peer
    could send from the LAN's own addresses)."""
    for held, reason in (
            ("2001:db8:100:1::/64", "is the IPv6 LAN 2001:db8:100:1::/64 (lan.address6): those "
                                    "addresses are on the router's own link, not behind this "
                                    "peer"),
            ("2001:db8:100:1::50/128", "inside the IPv6 LAN 2001:db8:100:1::/64 (lan.address6)"),
            ("2001:db8:100::/56", "contains the IPv6 LAN 2001:db8:100:1::/64 (lan.address6): "
                                  "the peer could send from the LAN's own addresses; only ::/0 "
                                  "(the hub's default route) may hold it")):
        text = EDGE6 + peer(KEY_C, f'"10.77.0.3/32", "{held}"')
        found = problems(text)
        assert any(line.startswith(f"wireguard.peer[1].allowed_ips[1]: {reason}")
                   for line in found), found
        # and ::/0 overlaps it: the tunnel's own rule says so too
        assert "wireguard.peer[1].allowed_ips[1]: overlaps ::/0 of wireguard.peer[0]" in found


def test_the_contains_rule_without_default6():
    """Without ::/0 (whose overlap rule would speak too): a peer's /56 holding
    the LAN's /64 is told at its key, beside the missing hub."""
    text = EDGE6.replace(HUB_PEER, 'allowed_ips = ["10.77.0.1/32"]') + peer(
        KEY_C, '"10.77.0.3/32", "2001:db8:100::/56"')
    assert problems(text) == [
        "lan.address6: routed through the tunnel: needs the hub as a [[wireguard.peer]] with "
        "an endpoint and \"::/0\" in its allowed_ips (the LAN's IPv6 comes and goes through "
        "it); add \"::/0\" to wireguard.peer[0].allowed_ips",
        "wireguard.peer[1].allowed_ips[1]: contains the IPv6 LAN 2001:db8:100:1::/64 "
        "(lan.address6): the peer could send from the LAN's own addresses; only ::/0 (the "
        "hub's default route) may hold it"]


def test_the_hubs_default6_may_hold_the_lan():
    cfg = load_text(EDGE6)
    assert cfg.lan is not None and "::/0" in cfg.wireguard.peer[0].allowed_ips


def test_address6_is_apart_from_the_tunnel_and_the_wan():
    text = EDGE6.replace('address = ["10.77.0.2/24"]',
                         'address = ["10.77.0.2/24", "2001:db8:100:1::2/64"]')
    assert only(text) == ("wireguard.address[1]: overlaps lan.address6 (2001:db8:100:1::/64)")
    text = EDGE6.replace("[lan]", "[wan]\nmode = 'static'\naddress = '2001:db8:100::2/48'\n"
                                  "gateway = '2001:db8:100::1'\n\n[lan]")
    assert only(text) == "lan.address6: overlaps wan.address (2001:db8:100::/48)"


def test_a_prefix_routed_into_the_tunnel_may_not_take_the_lans_64():
    text = EDGE6.replace('address = ["10.77.0.2/24"]',
                         'address = ["10.77.0.2/24"]\nroute = "prefixes"\n'
                         'prefixes = ["2001:db8:100::/56"]')
    assert only(text) == ("wireguard.prefixes[0]: contains the IPv6 LAN 2001:db8:100:1::/64 "
                          "(lan.address6): routed into the tunnel, it would cut the router off "
                          "that link")


def test_the_ipv4_lan_key_points_to_address6():
    assert only("[lan]\naddress = '2001:db8:100:1::1/64'\n") == (
        "lan.address: an IPv6 address: lan.address is the IPv4 LAN (DHCPv4); the LAN's IPv6 "
        "address goes in lan.address6 (a /64, like 2001:db8:100:1::1/64)")


# --- [ipv6]: the hub's routed prefix ----------------------------------------------------------


def test_the_hub_with_a_routed_prefix_loads():
    model = model_from_config(load_text(HUB6))
    assert model.ipv6 == m.Ipv6(routed_prefix="2001:db8:100::/56", ndp_proxy=False)
    assert model_from_config(load_text("")).ipv6 == m.Ipv6()


@pytest.mark.parametrize(("held", "length"), [
    ("2001:db8:100:10::/60", 60), ("2001:db8:100::/56", 56), ("2001:db8:100::2/128", 128),
    ("2001:db8:100:1::/65", 65)])
def test_a_routed_prefix_gives_an_edge_a_64(held, length):
    text = HUB6.replace('"2001:db8:100:1::/64"', f'"{held}"')
    assert only(text) == (
        f"wireguard.peer[0].allowed_ips[2]: /{length} inside ipv6.routed_prefix "
        "2001:db8:100::/56: an edge's LAN is one /64 of it; tunnel addresses come from outside "
        "it, like a ULA fd00::/64")


def test_with_ndp_proxy_an_edge_may_hold_single_addresses():
    proxy = HUB6.replace('routed_prefix = "2001:db8:100::/56"',
                         'routed_prefix = "2001:db8:100::/56"\nndp_proxy = true')
    text = proxy.replace('"2001:db8:100:1::/64"', '"2001:db8:100::10/128", "2001:db8:100:1::/64"')
    assert load_text(text).wireguard.peer[0].allowed_ips[2] == "2001:db8:100::10/128"
    assert only(proxy.replace('"2001:db8:100:1::/64"', '"2001:db8:100::/120"')) == (
        "wireguard.peer[0].allowed_ips[2]: /120 inside ipv6.routed_prefix 2001:db8:100::/56: an "
        "edge's LAN is one /64 of it or, with ndp_proxy, one address (/128); tunnel addresses "
        "come from outside it, like a ULA fd00::/64")


def test_outside_the_routed_prefix_any_length_goes():
    text = HUB6.replace('"2001:db8:100:1::/64"', '"2001:db8:100:1::/64", "fd00:77::2/128"')
    assert load_text(text).wireguard.peer[0].allowed_ips[-1] == "fd00:77::2/128"


def test_two_peers_never_hold_the_same_64():
    text = HUB6 + peer(KEY_C, '"10.77.0.3/32", "2001:db8:100:1::/64"', name="office")
    assert only(text) == ("wireguard.peer[1].allowed_ips[1]: overlaps 2001:db8:100:1::/64 of "
                          "wireguard.peer[0]")
    other = HUB6 + peer(KEY_C, '"10.77.0.3/32", "2001:db8:100:2::/64"', name="office")
    assert len(load_text(other).wireguard.peer) == 2


def test_ndp_proxy_needs_a_routed_prefix():
    assert only("[ipv6]\nndp_proxy = true\n") == (
        "ipv6.ndp_proxy: needs ipv6.routed_prefix: the prefix whose addresses the hub answers "
        "for on the WAN")
    text = HUB6.replace('routed_prefix = "2001:db8:100::/56"',
                        'routed_prefix = "2001:db8:100::/56"\nndp_proxy = true')
    assert model_from_config(load_text(text)).ipv6.ndp_proxy is True


def test_a_routed_prefix_needs_the_tunnel_and_ipv6_on_the_wan():
    assert only("[ipv6]\nrouted_prefix = '2001:db8:100::/56'\n") == (
        "ipv6.routed_prefix: needs wireguard enabled: its /64s go to the edges through the "
        "tunnel")
    text = HUB6.replace('gateway = "203.0.113.1"', 'gateway = "203.0.113.1"\nipv6 = "off"')
    assert only(text) == 'ipv6.routed_prefix: needs IPv6 on the WAN, but wan.ipv6 is "off"'


def test_a_routed_prefix_is_not_the_wans_on_link_subnet():
    wan = ('address = "203.0.113.2/24"', 'address = "2001:db8:100::2/64"')
    gw = ('gateway = "203.0.113.1"', 'gateway = "fe80::1"')
    text = HUB6.replace(*wan).replace(*gw)
    assert only(text) == (
        "ipv6.routed_prefix: overlaps the WAN subnet 2001:db8:100::/64 (wan.address): its "
        "on-link route would take the edges' addresses (on the WAN's link, with ndp_proxy: "
        "give wan.address as a /128)")
    single = HUB6.replace(wan[0], 'address = "2001:db8:100::2/128"').replace(*gw).replace(
        'routed_prefix = "2001:db8:100::/56"',
        'routed_prefix = "2001:db8:100::/56"\nndp_proxy = true')
    assert load_text(single).ipv6.ndp_proxy


# --- IPv6 forwards ------------------------------------------------------------------------------


def test_an_outer_ipv6_forward_loads_untranslated():
    cfg = load_text(HUB6 + forward("[2001:db8:100:1::50]:8080")
                    + forward("2001:DB8:100:1::51", port="9000-9010", name="range"))
    web, rng = model_from_config(cfg).forwards
    assert web == m.Forward("web", "tcp", 8080, 8080, "2001:db8:100:1::50", None, "outer",
                            via="edge")
    assert (web.family, web.target, web.target_ports) == (6, "2001:db8:100:1::50", "8080")
    assert (rng.address, rng.target_port, rng.target_ports, rng.family) == (
        "2001:db8:100:1::51", None, "9000-9010", 6)


def test_the_hub_and_the_edge_read_the_same_ipv6_table():
    table = forward("[2001:db8:100:1::50]:8080", protocol="both")
    hub = model_from_config(load_text(HUB6 + table)).forwards
    edge = model_from_config(load_text(EDGE6 + table)).forwards
    assert [f.role for f in hub] == ["outer"] and [f.role for f in edge] == ["inner"]
    assert [(f.address, f.target_port, f.protocols) for f in hub] == [
        (f.address, f.target_port, f.protocols) for f in edge]


def test_an_ipv6_forward_is_not_translated():
    assert only(HUB6 + forward("[2001:db8:100:1::50]:80")) == (
        "forward[0].to: an IPv6 forward is not translated: its target port is the public port "
        "8080 (or give the address alone)")
    assert only(HUB6 + forward("[2001:db8:100:1::50]:80", port="8000-8010")) == (
        "forward[0].to: a range maps to the same ports: give the target without a port")
    assert only(HUB6 + forward("2001:db8:100:1::50", extra="snat = true\n")) == (
        "forward[0].snat: only for an IPv4 target: an IPv6 forward is not translated (the "
        "target sees the client's address)")


def test_an_outer_ipv6_target_is_in_the_peers_allowed_ips():
    assert only(HUB6 + forward("[2001:db8:100:2::50]:8080")) == (
        "forward[0].to: not in a LAN that edge routes (its allowed_ips: 10.77.0.2/32, "
        "192.168.77.0/24, 2001:db8:100:1::/64)")
    v4_only = HUB6.replace(', "2001:db8:100:1::/64"', "")
    assert only(v4_only + forward("2001:db8:100:1::50")).startswith(
        "forward[0].to: not in a LAN that edge routes")


@pytest.mark.parametrize(("to", "reason"), [
    ("[2001:db8:100:2::50]:8080",
     "not inside the IPv6 LAN 2001:db8:100:1::/64 (lan.address6): via is this router (the "
     "edge the target is behind); the delegated prefix can change; forward to an address in "
     "lan.address6"),
    ("[2001:db8:100:1::1]:8080", "is this router's own LAN address (lan.address6), not a host "
                                 "behind it"),
    ("2001:db8:100:1::", "is the subnet-router anycast address of 2001:db8:100:1::/64, not a "
                         "host"),
])
def test_an_inner_ipv6_target_is_a_host_of_address6(to, reason):
    assert only(EDGE6 + forward(to)) == f"forward[0].to: {reason}"


def test_an_inner_ipv6_target_loads():
    [fwd] = model_from_config(load_text(EDGE6 + forward("[2001:db8:100:1::50]:8080"))).forwards
    assert (fwd.role, fwd.address, fwd.target_port, fwd.family) == (
        "inner", "2001:db8:100:1::50", None, 6)


def test_a_target_in_the_delegated_prefix_is_refused():
    """Without lan.address6 the LAN's IPv6 is the WAN's delegated /64: it can change."""
    edge = EDGE6.replace('address6 = "2001:db8:100:1::1/64"\n', "").replace(
        HUB_PEER, 'allowed_ips = ["10.77.0.1/32"]')
    assert only(edge + forward("[2001:db8:77:1::50]:8080")) == (
        "forward[0].to: an IPv6 target in this router's LAN needs lan.address6 (a static /64): "
        "the delegated prefix can change; forward to an address in lan.address6")
    assert only(edge + forward("2001:db8:77:1::50", via=None)).endswith(
        "the delegated prefix can change; forward to an address in lan.address6")


def test_a_local_ipv6_forward():
    cfg = load_text(EDGE6 + forward("[2001:db8:100:1::50]:8080", via=None))
    [fwd] = model_from_config(cfg).forwards
    assert (fwd.role, fwd.address) == ("local", "2001:db8:100:1::50")
    assert only(EDGE6 + forward("[2001:db8:100:9::50]:8080", via=None)).startswith(
        "forward[0].to: not inside the IPv6 LAN 2001:db8:100:1::/64 (lan.address6): a forward "
        "without via goes to a host in this router's LAN")


def test_ipv6_ports_are_the_targets_not_the_routers():
    """An IPv6 forward opens a port on its target's own address: keel's own
    ports, the firewall's open ports and IPv4 forwards' ports are apart."""
    text = (HUB6 + "\n[firewall]\nopen_tcp = [8080]\n"
            + forward("[2001:db8:100:1::50]:22", port=22, name="ssh6")
            + forward("2001:db8:100:1::50", port=8080, name="web6")
            + forward("192.168.77.50:80", port=8081, name="web4")
            + forward("2001:db8:100:1::51", port=8081, name="web6b"))
    assert len(load_text(text).forward) == 4


def test_two_ipv6_forwards_clash_only_on_the_same_target():
    text = (HUB6 + forward("2001:db8:100:1::50", port="8000-8010", name="a")
            + forward("[2001:db8:100:1::50]:8005", port=8005, name="b")
            + forward("[2001:db8:100:1::51]:8005", port=8005, name="c")
            + forward("[2001:db8:100:1::51]:8005", port=8005, name="d", protocol="udp"))
    assert only(text) == ("forward[1].port: overlaps forward[0] (a) on tcp to the same IPv6 "
                          "target")



# --- the examples' commented IPv6 ---------------------------------------------------------------


def test_the_examples_ipv6_comments_load_when_followed():
    """What edge.toml and hub.toml say to uncomment and add is a valid pair."""
    edge = paths.example_text("edge")
    assert '# address6 = "2001:db8:100:1::1/64"' in edge
    edge = edge.replace('# address6 = "2001:db8:100:1::1/64"',
                        'address6 = "2001:db8:100:1::1/64"').replace(
        'allowed_ips = ["10.77.0.1/32", "172.31.77.0/24"]',
        'allowed_ips = ["10.77.0.1/32", "172.31.77.0/24", "::/0"]')
    assert model_from_config(load_text(edge)).lans[0].address6 == "2001:db8:100:1::1/64"
    hub = paths.example_text("hub")
    assert "# [ipv6]\n# routed_prefix" in hub
    hub = hub.replace("# [ipv6]\n# routed_prefix", "[ipv6]\nrouted_prefix").replace(
        'allowed_ips = ["10.77.0.2/32"]', 'allowed_ips = ["10.77.0.2/32", "2001:db8:100:1::/64"]')
    assert model_from_config(load_text(hub)).ipv6.routed_prefix == "2001:db8:100::/56"
    table = forward("[2001:db8:100:1::50]:8080")
    assert model_from_config(load_text(edge + table)).forwards[0].role == "inner"
