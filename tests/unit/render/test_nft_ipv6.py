"""One inet ruleset for both families (keel.render.nft): ICMPv6 as RFC 4890
says, the WAN's DHCPv6 client, inbound IPv6 to the LAN closed but for the
forwards, NAT for IPv4 only, IPv6 forwards without DNAT, the hub's routed
prefix; and with real packets through a real nftables, in network namespaces
(tests.unit.render.nft_traffic)."""

from __future__ import annotations

import re
import textwrap
from dataclasses import replace

from hypothesis import given, settings
from hypothesis import strategies as st

from keel.model import Firewall, Forward, Ipv6, Lan, Nat, Peer, RouterModel, Wan, WireGuard
from keel.render import nft
from tests.unit.netns import needs_nft, run_in_netns
from tests.unit.render.test_forwards_render import HUB, WEB
from tests.unit.render.test_render import EDGE, PUB

# an edge with native IPv6: SLAAC and a delegated prefix on the WAN; its LAN
# a static /64 its provider routes to it; one IPv6 forward to a LAN host
# (local: from the WAN)
WEB6_LOCAL = Forward("web6", "tcp", 8443, 8443, "2001:db8:1::2", None, "local")
EDGE6 = replace(EDGE, wans=(replace(EDGE.wans[0], ipv6="auto"),),
                lans=(replace(EDGE.lans[0], address6="2001:db8:1::1/64"),),
                forwards=(WEB6_LOCAL,))
# the hub: IPv6 on its WAN, its routed prefix, a /64 of it to the edge
# through the tunnel; one IPv6 forward to a host there, beside an IPv4 one
WEB6_OUTER = Forward("web6", "tcp", 8443, 8443, "2001:db8:100:1::2", None, "outer",
                     via="edge1")
HUB6 = replace(
    HUB,
    wans=(Wan("eth0", ipv6="auto"),),
    wireguard=WireGuard(address=("10.77.0.1/24",), peer=(
        Peer(PUB, ("10.77.0.2/32", "192.168.77.0/24", "2001:db8:100:1::/64"), name="edge1"),)),
    firewall=Firewall(forward_tunnel_to_wan=True),
    ipv6=Ipv6(routed_prefix="2001:db8:100::/56"),
    forwards=(WEB6_OUTER, WEB),
)
# the edge behind that hub: its LAN's /64 of the hub's prefix, through the tunnel
WEB6_INNER = replace(WEB6_OUTER, role="inner")
EDGE6_VIA_HUB = replace(EDGE, lans=(replace(EDGE.lans[0], address6="2001:db8:100:1::1/64"),),
                        forwards=(WEB6_INNER,))


def _chain(rules: str, name: str) -> list[str]:
    """The rules of one chain, as rendered (its type line left out)."""
    body = rules.split(f"\tchain {name} {{\n", 1)[1].split("\n\t}", 1)[0]
    return [line.strip() for line in body.splitlines()[1:]]


def _index(chain: list[str], start: str) -> int:
    return next(i for i, line in enumerate(chain) if line.startswith(start))


ERRORS = ("icmpv6 type { destination-unreachable, packet-too-big, time-exceeded, "
          "parameter-problem } accept")


# --- ICMPv6 to the router (RFC 4890 4.4) ---------------------------------------------
def test_the_router_takes_icmpv6_as_rfc_4890_says():
    chain = _chain(nft.render_ruleset(EDGE6), "input")
    # the errors before conntrack's "invalid" (an error about a flow it forgot)
    assert chain[:3] == ["ct state established,related accept", ERRORS,
                         "ct state invalid drop"]
    # neighbour discovery from the link only, MLD from link-local sources
    assert ("icmpv6 type { nd-router-solicit, nd-router-advert, nd-neighbor-solicit, "
            "nd-neighbor-advert } ip6 hoplimit 255 accept") in chain
    assert ("ip6 saddr fe80::/10 icmpv6 type { mld-listener-query, mld-listener-report, "
            "mld-listener-done, mld2-listener-report } accept") in chain
    # echo: from the LAN and the tunnel, limited from the WAN as IPv4's is
    assert 'iifname { "eth1", "wg0" } icmpv6 type echo-request accept' in chain
    assert 'iifname { "eth0" } icmpv6 type echo-request limit rate 20/second accept' in chain
    # the rest dropped (redirects, renumbering, node information, unknown types),
    # before the LAN's accept-all, which so takes no ICMPv6
    drop = chain.index("meta l4proto ipv6-icmp drop")
    assert drop < chain.index('iifname { "eth1" } accept')
    assert all("icmpv6" not in line and "ipv6-icmp" not in line for line in chain[drop + 1:])
    assert "meta l4proto ipv6-icmp accept" not in chain
    for name in ("nd-redirect", "router-renumbering", "ind-neighbor"):
        assert name not in nft.render_ruleset(EDGE6)


def test_ping_on_wan_off_leaves_ipv6_echo_from_the_wan_out_too():
    rules = nft.render_ruleset(replace(EDGE6, firewall=Firewall(ping_on_wan=False)))
    chain = _chain(rules, "input")
    assert not any(line.startswith('iifname { "eth0" } icmpv6 type echo-request')
                   for line in chain)
    assert not any("icmp type" in line and "echo-request" in line for line in chain)
    # from the LAN and the tunnel still, and the errors from everywhere
    assert 'iifname { "eth1", "wg0" } icmpv6 type echo-request accept' in chain
    assert ERRORS in chain


def test_the_wans_dhcpv6_client_gets_its_servers_link_local_replies_when_ipv6_is_auto():
    two = replace(EDGE6, wans=(Wan("eth0", ipv6="auto"), Wan("eth2")))
    chain = _chain(nft.render_ruleset(two), "input")
    assert ('iifname { "eth0" } ip6 saddr fe80::/10 ip6 daddr fe80::/10 '
            "udp sport 547 udp dport 546 accept") in chain
    assert not any("dport 546" in line for line in _chain(nft.render_ruleset(EDGE), "input"))


# --- forward ----------------------------------------------------------------------
def test_forwarded_icmpv6_errors_always_pass_and_echo_reaches_lan_hosts_limited():
    chain = _chain(nft.render_ruleset(EDGE6), "forward")
    assert chain[:3] == ["ct state established,related accept", ERRORS,
                         "ct state invalid drop"]
    echo = chain.index('oifname { "eth1" } icmpv6 type echo-request limit rate 1000/second '
                       "accept")
    # any other new ICMPv6 (node information) dropped before the LAN's accepts
    assert chain.index("icmpv6 type != echo-request drop") == echo + 1
    assert echo + 1 < _index(chain, 'iifname { "eth1" } oifname')


def test_inbound_ipv6_to_the_lan_is_closed_but_for_a_forward():
    chain = _chain(nft.render_ruleset(EDGE6), "forward")
    into_lan = [line for line in chain if 'oifname { "eth1" }' in line]
    assert into_lan == [
        'oifname { "eth1" } icmpv6 type echo-request limit rate 1000/second accept',
        'iifname { "eth0" } oifname { "eth1" } ip6 daddr 2001:db8:1::2 tcp dport 8443 '
        'ct state new counter name "fwd-web6" accept']
    # out, both families as before
    assert 'iifname { "eth1" } oifname { "eth0" } accept' in chain
    assert 'iifname { "eth1" } oifname "wg0" accept' in chain


def test_every_masquerade_is_ipv4_only():
    for model in (EDGE, EDGE6, HUB, HUB6, replace(HUB, forwards=(replace(WEB, snat=True),))):
        lines = [line for line in nft.render_ruleset(model).splitlines()
                 if "masquerade" in line]
        assert lines
        assert all("meta nfproto ipv4" in line or " ip daddr " in line for line in lines), lines
    chain = _chain(nft.render_ruleset(EDGE6), "postrouting")
    assert chain == ['oifname { "eth0", "wg0" } meta nfproto ipv4 masquerade']


# --- IPv6 forwards: no DNAT --------------------------------------------------------
def test_an_ipv6_forward_on_the_hub_is_routed_into_the_tunnel_and_counted():
    rules = nft.render_ruleset(HUB6)
    chain = _chain(rules, "forward")
    assert ('iifname { "eth0" } oifname "wg0" ip6 daddr 2001:db8:100:1::2 tcp dport 8443 '
            'ct state new counter name "fwd-web6" accept') in chain
    assert "counter fwd-web6 {" in rules
    # no DNAT for it; the IPv4 forward beside it renders as before
    assert "2001:db8:100:1::2" not in rules.split("\tchain prerouting {")[1]
    assert ('fib daddr type local ip daddr != { 127.0.0.0/8, 10.77.0.1 } tcp dport 8080 '
            'counter name "fwd-web" dnat ip to 192.168.77.50:80') in rules
    assert "ct status dnat ip daddr 192.168.77.50 tcp dport 80 accept" in chain


def test_an_ipv6_forward_on_the_edge_needs_no_mark():
    rules = nft.render_ruleset(EDGE6_VIA_HUB)
    chain = _chain(rules, "forward")
    assert ('iifname "wg0" oifname { "eth1" } ip6 daddr 2001:db8:100:1::2 tcp dport 8443 '
            'ct state new counter name "fwd-web6" accept') in chain
    # no mark, no replies chain, no DNAT, no hairpin: its replies go by their source
    for absent in ("ct mark", "meta mark", "chain replies", "chain prerouting", "ct status dnat"):
        assert absent not in rules
    # nothing else from the tunnel into the LAN but echo
    assert [line for line in chain if line.startswith('iifname "wg0" oifname { "eth1" }')] == [
        'iifname "wg0" oifname { "eth1" } ip6 daddr 2001:db8:100:1::2 tcp dport 8443 '
        'ct state new counter name "fwd-web6" accept']


def test_both_protocols_of_an_ipv6_forward_and_a_port_range():
    game = Forward("game6", "both", 27015, 27020, "2001:db8:1::60", None, "local")
    chain = _chain(nft.render_ruleset(replace(EDGE6, forwards=(game,))), "forward")
    for proto in ("tcp", "udp"):
        assert ('iifname { "eth0" } oifname { "eth1" } ip6 daddr 2001:db8:1::60 '
                f'{proto} dport 27015-27020 ct state new counter name "fwd-game6" accept'
                ) in chain


def test_an_ipv4_forward_without_a_tunnel_address_counts_only_ipv4():
    """The DNAT's counter: an IPv6 connection to the same public port is not
    the forward's (`dnat ip` would leave it as it is)."""
    nas = Forward("nas", "udp", 5000, 5000, "192.168.50.9", 5001, "local")
    plain = RouterModel(wans=(Wan("eth0"),), lans=(Lan("eth1", "192.168.50.1/24"),),
                        forwards=(nas,))
    assert _chain(nft.render_ruleset(plain), "prerouting") == [
        'fib daddr type local ip daddr != { 127.0.0.0/8, 192.168.50.1 } udp dport 5000 '
        'counter name "fwd-nas" dnat ip to 192.168.50.9:5001']


def test_a_forward_takes_only_what_comes_for_the_wans_addresses():
    """A forward of port 53 on a router with a LAN: the LAN's DNS queries to
    the router's own LAN address (dnsmasq) are not DNATed, nor what comes for
    the tunnel's address or loopback: an IPv4 local address left is the
    WAN's (by DHCP or static)."""
    dns = Forward("dns", "udp", 53, 53, "192.168.50.9", None, "local")
    hub = RouterModel(wans=(Wan("eth0"),), lans=(Lan("eth1", "192.168.50.1/24"),),
                      wireguard=WireGuard(address=("10.77.0.1/24", "fd77::1/64")),
                      forwards=(dns,))
    (rule,) = _chain(nft.render_ruleset(hub), "prerouting")
    assert rule.startswith("fib daddr type local ip daddr != { 127.0.0.0/8, 10.77.0.1, "
                           "192.168.50.1 } udp dport 53 ")


# --- the hub: the routed prefix ------------------------------------------------------
def test_the_hub_forwards_the_edges_ipv6_out_and_nothing_new_back_but_forwards_and_echo():
    chain = _chain(nft.render_ruleset(HUB6), "forward")
    assert 'iifname "wg0" oifname { "eth0" } accept' in chain
    assert ('oifname "wg0" ip6 daddr 2001:db8:100::/56 icmpv6 type echo-request '
            "limit rate 1000/second accept") in chain
    into_tunnel = [line for line in chain if 'oifname "wg0"' in line
                   and "maxseg" not in line and "echo-request" not in line]
    assert into_tunnel == [
        'iifname { "eth0" } oifname "wg0" ip6 daddr 2001:db8:100:1::2 tcp dport 8443 '
        'ct state new counter name "fwd-web6" accept']
    # its IPv4 out of the WAN is masqueraded, its IPv6 not
    assert _chain(nft.render_ruleset(HUB6), "postrouting")[-1] == (
        'oifname { "eth0" } meta nfproto ipv4 masquerade')



def test_a_hub_with_a_routed_prefix_sends_only_its_ipv6_out_without_forward_tunnel_to_wan():
    hub = replace(HUB6, firewall=Firewall(forward_tunnel_to_wan=False))
    chain = _chain(nft.render_ruleset(hub), "forward")
    out = [line for line in chain if line.startswith('iifname "wg0" oifname { "eth0" }')]
    assert out == ['iifname "wg0" oifname { "eth0" } ip6 saddr 2001:db8:100::/56 accept']
    no_prefix = replace(hub, ipv6=Ipv6())
    assert not [line for line in _chain(nft.render_ruleset(no_prefix), "forward")
                if line.startswith('iifname "wg0" oifname { "eth0" }')]

# --- invariants over many models (hypothesis) ----------------------------------------
ADDRESSES = {4: "192.168.77.50", 6: "2001:db8:100:1::50"}


@st.composite
def models(draw: st.DrawFn) -> RouterModel:
    tunnel = draw(st.booleans())
    lan = draw(st.booleans())
    forwards = []
    for i in range(draw(st.integers(0, 4))):
        family = draw(st.sampled_from((4, 6)))
        role = draw(st.sampled_from(("outer", "inner", "local") if tunnel else ("local",)))
        forwards.append(Forward(
            f"f{i}", draw(st.sampled_from(("tcp", "udp", "both"))), 1000 + 10 * i,
            1000 + 10 * i + draw(st.integers(0, 3)), ADDRESSES[family],
            draw(st.sampled_from((None, 80))) if family == 4 else None, role,
            via="edge1" if role != "local" else None,
            snat=draw(st.booleans()) and family == 4))
    return RouterModel(
        wans=(Wan("eth0", ipv6=draw(st.sampled_from(("auto", "off")))),),
        lans=(Lan("eth1", "192.168.77.1/24"),) if lan else (),
        wireguard=HUB6.wireguard if tunnel else None,
        firewall=Firewall(ping_on_wan=draw(st.booleans()),
                          forward_tunnel_to_wan=draw(st.booleans())),
        nat=Nat(masquerade_wan=draw(st.booleans()), masquerade_tunnel=draw(st.booleans())),
        ipv6=Ipv6(routed_prefix="2001:db8:100::/56" if draw(st.booleans()) else None),
        forwards=tuple(forwards))


@settings(max_examples=300, deadline=None)
@given(models())
def test_whatever_the_model_nat_is_ipv4_only_and_the_wan_opens_nothing_new_unnamed(model):
    rules = nft.render_ruleset(model)
    for line in rules.splitlines():
        if "masquerade" in line or "dnat" in line.split("ct status dnat")[-1]:
            assert "meta nfproto ipv4" in line or " ip daddr " in line, line
        assert "ip6 daddr" not in line or "dnat" not in line, line
    assert "meta l4proto ipv6-icmp accept" not in rules
    forward = _chain(rules, "forward")
    # what comes in from the WAN new: a forward's address and port, or echo (limited)
    for line in forward:
        if line.startswith('iifname { "eth0" }'):
            assert re.search(r'ip6? daddr \S+ (tcp|udp) dport \S+ ct state new counter '
                             r'name "fwd-f\d+" accept$', line), line
    assert forward[:3] == ["ct state established,related accept", ERRORS,
                           "ct state invalid drop"]


# --- on a real nftables ------------------------------------------------------------
LOAD = textwrap.dedent("""
    import json, subprocess, sys
    sys.path.insert(0, sys.argv[1])
    from pathlib import Path
    from keel.apply import engine
    from keel.render import nft
    from keel.system.commands import Runner
    from tests.unit.render import test_nft_ipv6 as t
    run_dir, runner, out = Path(sys.argv[2]), Runner(), {}
    for name in ("EDGE6", "HUB6", "EDGE6_VIA_HUB"):
        path = run_dir / f"{name}.nft"
        path.write_text(nft.render_ruleset(getattr(t, name)))
        runner.run(["nft", "-c", "-f", str(path)])
        runner.run(["nft", "-f", str(path)])
        engine.record_live_ruleset(runner, run_dir)
        first = engine.Probe(runner, run_dir).nft_listing()
        runner.run(["nft", "-f", str(path)])
        out[name] = first == engine.Probe(runner, run_dir).nft_listing() != ""
    print(json.dumps(out))
""")


@needs_nft
def test_the_dual_stack_rulesets_load_and_list_back_the_same(tmp_path):
    assert run_in_netns(LOAD, tmp_path) == {"EDGE6": True, "HUB6": True, "EDGE6_VIA_HUB": True}


TRAFFIC = textwrap.dedent("""
    import json, sys
    sys.path.insert(0, sys.argv[1])
    from tests.unit.render import nft_traffic
    print(json.dumps(nft_traffic.scenario("{kind}", sys.argv[2])))
""")


def _traffic(kind: str, tmp_path) -> dict:
    return run_in_netns(TRAFFIC.replace("{kind}", kind), tmp_path)


def _both_ways(out: dict, inside6: str) -> None:
    """What the edge and the hub have in common, from the inside host's side
    and the internet's."""
    # out: neighbours resolve on both links, echo goes out and comes back
    assert out["echo_router"] and out["echo_out"]
    # connections out in both families: IPv6 with the host's own address, IPv4 NATed
    assert out["out6"] and out["out4"]
    assert out["out_peers"] == [inside6, "203.0.113.1"]
    # a packet too big for the path beyond: the internet router's word gets back
    assert out["ptb_related"] == [[2, 0, "2001:db8:ff::2"]] and out["ptb_mtu"] == [1280]
    # in: echo reaches the host; a new connection to a port nothing forwards is
    # dropped (no answer at all), the forwarded one gets through with the
    # client's address and is counted
    assert out["echo_in"]
    assert out["in_closed"] == {"ok": False, "error": "TimeoutError"}
    assert out["in_closed_peers"] == []
    assert out["in_forward"] and out["in_forward_peers"] == ["2001:db8:ff::2"]
    assert out["counters"]["fwd-web6"] >= 1
    # a packet-too-big about a flow conntrack never saw still reaches the host;
    # node information and router renumbering do not
    assert out["in_icmp"] == [[2, 0, "2001:db8:ff::2"]]
    # the router from the internet: echo and neighbour discovery with hop limit
    # 255 (the one with 64 dropped); no node information, renumbering, redirect
    assert out["router_icmp"] == [128, 135]
    assert out["router_ns_targets"] == ["2001:db8:ff::99"]
    assert not out["service_outside"]
    # the WAN's DHCPv6 client (ipv6 = "auto"): its server's link-local reply,
    # not a global one
    assert out["dhcpv6"] == ["link-local"]
    # the listing nft gives back is what keel recorded (no drift from nothing)
    assert out["stable"]


@needs_nft
def test_real_packets_through_the_edge(tmp_path):
    """EDGE6: a LAN host behind it, the WAN's IPv6 auto."""
    out = _traffic("edge", tmp_path)
    _both_ways(out, "2001:db8:1::2")
    assert out["service_inside"]  # the LAN reaches the router's services


@needs_nft
def test_real_packets_through_the_hub(tmp_path):
    """HUB6: an edge's host behind its tunnel (a veth named wg0 here), the
    /64 of its routed prefix."""
    out = _traffic("hub", tmp_path)
    _both_ways(out, "2001:db8:100:1::2")
    assert out["dhcpv6"] == ["link-local"]
    assert not out["service_inside"]  # the tunnel reaches only keel's own ports
    assert out["counters"]["fwd-web"] == 0
