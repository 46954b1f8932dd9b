"""The one peer chooser: the dashboard probes the peer the self-tests load,
at its tunnel address (IPv4 or IPv6) and outside the tunnel at its endpoint
(an IPv6 one only when the WAN has IPv6)."""

from __future__ import annotations

import ipaddress

import pytest
from hypothesis import given
from hypothesis import strategies as st

from keel.parse.wgdump import parse_wg_dump
from keel.system.source import FixtureSource
from keel.system.wireguard import IP_ADDR, WG_DUMP
from keel.wireguard.peers import NoPeer, TunnelPeer, choose_peer, endpoint_host, outside_target
from keel.wireguard.target import read_probe_peer
from tests.fixtures.sources import lab

KEY = "DGDJOoNeCQAxEAKW/6R/XQpwi4FNhdoJTo1LLorzzRg="
OWN = "HlOu1tgN6jIPCqo/B9y+b7TT1bltyagEMGZGjSZNPVI="


def dump(*peers: tuple[str, str], fwmark: str = "off") -> str:
    head = f"wg0\t(hidden)\t{OWN}\t51820\t{fwmark}\n"
    return head + "".join(f"wg0\t{KEY}\t(none)\t{endpoint}\t{allowed}\t0\t0\t0\t25\n"
                          for endpoint, allowed in peers)


def nets(*texts: str) -> dict[str, tuple]:
    return {"wg0": tuple(ipaddress.ip_network(t) for t in texts)}


def test_the_lab_peer():
    peer = choose_peer(parse_wg_dump(lab("wg-show-all-dump.txt")), wan_ipv6=False)
    assert peer == TunnelPeer("wg0", "10.99.0.2", "192.0.2.2")


def test_the_first_single_address_peer_and_a_given_address():
    interfaces = parse_wg_dump(dump(("198.51.100.7:51820", "0.0.0.0/0"),
                                    ("[2001:db8::1]:51820", "10.77.0.3/32,192.168.9.0/24")))
    assert choose_peer(interfaces, wan_ipv6=True) == TunnelPeer("wg0", "10.77.0.3",
                                                                "2001:db8::1")
    # routed by 0/0
    assert choose_peer(interfaces, "8.8.8.8", wan_ipv6=False).public_ip == "198.51.100.7"
    assert endpoint_host(None) is None


def test_an_ipv6_tunnel_address():
    """A tunnel with IPv6 addresses: the peer's /128 is its tunnel address,
    and a given IPv6 address finds the peer routing it (::/0 too)."""
    interfaces = parse_wg_dump(dump(("[2001:db8::1]:51820", "fd00:77::2/128,::/0")))
    peer = choose_peer(interfaces, wan_ipv6=True, own=nets("fd00:77::/64"))
    assert peer == TunnelPeer("wg0", "fd00:77::2", "2001:db8::1")
    assert choose_peer(interfaces, "fd00:77:0:0::2", wan_ipv6=True).tunnel_ip == "fd00:77::2"
    assert choose_peer(interfaces, "2001:db8:5::9", wan_ipv6=True).tunnel_ip == "2001:db8:5::9"
    with pytest.raises(NoPeer, match=r"routes 10\.1\.1\.1"):  # no IPv4 routed to it
        choose_peer(interfaces, "10.1.1.1", wan_ipv6=True)


def test_a_single_address_outside_the_tunnels_networks_is_not_its_tunnel_address():
    """With ndp_proxy a hub's peer may hold a /128 of the routed prefix (an
    edge's LAN): the tunnel address is the one in the tunnel's networks."""
    interfaces = parse_wg_dump(dump(("[2001:db8::1]:51820",
                                     "2001:db8:100::5/128,2001:db8:100:1::/64,fd00:77::2/128")))
    assert choose_peer(interfaces, wan_ipv6=True,
                       own=nets("10.77.0.0/24", "fd00:77::/64")).tunnel_ip == "fd00:77::2"
    # not known, or the tunnel has no address: the first single address, as before
    assert choose_peer(interfaces, wan_ipv6=True).tunnel_ip == "2001:db8:100::5"
    assert choose_peer(interfaces, wan_ipv6=True, own={}).tunnel_ip == "2001:db8:100::5"
    # known, and no single address inside: none
    with pytest.raises(NoPeer, match="in its tunnel's networks"):
        choose_peer(interfaces, wan_ipv6=True, own=nets("10.77.0.0/24"))


def test_dual_stack_peers_keep_the_order_of_their_allowed_ips():
    interfaces = parse_wg_dump(dump(("192.0.2.2:51820", "10.77.0.2/32,fd00:77::2/128")))
    own = nets("10.77.0.0/24", "fd00:77::/64")
    assert choose_peer(interfaces, wan_ipv6=True, own=own).tunnel_ip == "10.77.0.2"
    only6 = nets("fd00:77::/64")
    assert choose_peer(interfaces, wan_ipv6=True, own=only6).tunnel_ip == "fd00:77::2"


def test_the_tunnels_fwmark_goes_with_the_peer():
    interfaces = parse_wg_dump(dump(("192.0.2.2:51820", "10.77.0.2/32"), fwmark="0xca6c"))
    assert choose_peer(interfaces, wan_ipv6=False).fwmark == 0xca6c


def test_no_peer_says_why():
    with pytest.raises(NoPeer, match="give --peer"):
        choose_peer(parse_wg_dump(dump(("198.51.100.7:51820", "0.0.0.0/0"))), wan_ipv6=True)
    with pytest.raises(NoPeer, match=r"routes 10\.1\.1\.1"):
        choose_peer({}, "10.1.1.1", wan_ipv6=True)
    with pytest.raises(NoPeer, match=r"'hub\.example' is not an IP address"):
        choose_peer({}, "hub.example", wan_ipv6=True)


@pytest.mark.parametrize(("endpoint", "wan_ipv6", "target"), [
    ("192.0.2.2:51820", False, "192.0.2.2"),  # as before
    ("192.0.2.2:51820", True, "192.0.2.2"),
    ("[2001:db8::1]:51820", True, "2001:db8::1"),  # the WAN has IPv6: the IPv6 endpoint
    ("[2001:db8::1]:51820", False, None),  # it has not: unreachable outside, no probe
    ("[2001:DB8:0::1]:51820", True, "2001:db8::1"),  # as ping prints it back
    ("[::ffff:192.0.2.9]:51820", False, "192.0.2.9"),  # IPv4-mapped: IPv4
    ("[fe80::2%eth0]:51820", False, "fe80::2%eth0"),  # on our link: no WAN IPv6 needed
    (None, True, None),
    ("hub.example:51820", True, None),  # not an address (wg prints addresses)
])
def test_outside_target(endpoint, wan_ipv6, target):
    assert outside_target(endpoint, wan_ipv6) == target


@given(st.ip_addresses(), st.integers(1, 65535), st.booleans())
def test_outside_target_of_any_endpoint(addr, port, wan_ipv6):
    """Any endpoint as wg prints it: its own address, or None only for an
    IPv6 one off our links without IPv6 on the WAN."""
    endpoint = f"[{addr}]:{port}" if addr.version == 6 else f"{addr}:{port}"
    got = outside_target(endpoint, wan_ipv6)
    if addr.version == 6 and addr.ipv4_mapped is not None:
        assert got == str(addr.ipv4_mapped)
    elif addr.version == 6 and not wan_ipv6 and not addr.is_link_local:
        assert got is None
    else:
        assert got == str(addr)


def test_read_probe_peer_from_the_running_system():
    """wg's dump, the tunnel's addresses (ip) and the WAN's IPv6 (ip -6)."""
    ip_addr = ('[{"ifname": "wg0", "addr_info": [{"family": "inet6", "local": "fd00:77::1", '
               '"prefixlen": 64, "scope": "global"}]}, {"ifname": "eth0", "addr_info": '
               '[{"family": "inet6", "local": "2001:db8:5::7", "prefixlen": 64, '
               '"scope": "global", "valid_life_time": 3000, "preferred_life_time": 1000}]}]')
    source = FixtureSource(commands={
        WG_DUMP: dump(("[2001:db8::1]:51820", "2001:db8:100::5/128,fd00:77::2/128"),
                      fwmark="0xca6c"),
        IP_ADDR: ip_addr,
        ("ip", "-6", "-j", "addr", "show"): ip_addr,
        ("ip", "-6", "-j", "route", "show", "default"):
            '[{"dst": "default", "gateway": "fe80::1", "dev": "eth0"}]'})
    assert read_probe_peer(source) == TunnelPeer("wg0", "fd00:77::2", "2001:db8::1", 0xca6c)
    # no IPv6 default route: the IPv6 endpoint is no target outside
    source.commands[("ip", "-6", "-j", "route", "show", "default")] = ["[]"]
    assert read_probe_peer(source).public_ip is None


def test_a_given_address_that_is_none_is_named_before_the_tunnel_is_read():
    source = FixtureSource()  # no wg: a SourceError, were it read
    with pytest.raises(NoPeer, match=r"'10\.77\.0\.300' is not an IP address"):
        read_probe_peer(source, "10.77.0.300")
    assert source.reads == []
