"""The relations that would cut the router off: the tunnel taking the LAN,
the WAN subnet or the way to a peer; a gateway that is no gateway; the
VPS-style /32 WAN accepted. The overlap checks stay fast for a big hub."""

from __future__ import annotations

import ipaddress
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bench.config_validation import hub_config
from keel.config.errors import ConfigError
from keel.config.load import load_text
from keel.config.netsets import NetSet, earliest_overlaps

KEY_A = "HlOu1tgN6jIPCqo/B9y+b7TT1bltyagEMGZGjSZNPVI="
KEY_B = "DGDJOoNeCQAxEAKW/6R/XQpwi4FNhdoJTo1LLorzzRg="
WG = "[wireguard]\nenabled = true\naddress = ['10.7.0.2/24']\n"
LAN = "[lan]\naddress = '192.168.77.1/24'\n"  # the default DHCP range fits
STATIC = "[wan]\nmode = 'static'\naddress = '203.0.113.2/24'\ngateway = '203.0.113.1'\n"


def peer(allowed: str = "'10.7.0.1/32'", key: str = KEY_A, extra: str = "") -> str:
    return f"[[wireguard.peer]]\npublic_key = '{key}'\nallowed_ips = [{allowed}]\n{extra}"


def prefixes(*nets: str) -> str:
    return "route = 'prefixes'\nprefixes = [" + ", ".join(f"'{n}'" for n in nets) + "]\n"


def problems(text: str) -> list[str]:
    with pytest.raises(ConfigError) as err:
        load_text(text, "t.toml")
    return [str(p) for p in err.value.problems]


@pytest.mark.parametrize(("text", "expected"), [
    # what route = prefixes puts in the main table
    (LAN + WG + prefixes("192.168.77.0/24") + peer("'10.7.0.1/32', '192.168.0.0/16'"),
     "wireguard.prefixes[0]: is the LAN 192.168.77.0/24 (lan.address): routed into the tunnel, "
     "it would cut the router off that link"),
    (LAN + WG + prefixes("192.168.77.128/25") + peer("'10.7.0.1/32', '192.168.0.0/16'"),
     "wireguard.prefixes[0]: inside the LAN 192.168.77.0/24 (lan.address)"),
    (LAN + WG + prefixes("192.168.0.0/16") + peer("'10.7.0.1/32', '192.168.0.0/16'"),
     "wireguard.prefixes[0]: contains the LAN 192.168.77.0/24 (lan.address)"),
    (STATIC + WG + prefixes("203.0.113.0/24") + peer("'10.7.0.1/32', '203.0.0.0/16'"),
     "wireguard.prefixes[0]: is the WAN subnet 203.0.113.0/24 (wan.address)"),
    (STATIC + WG + prefixes("203.0.113.64/26") + peer("'10.7.0.1/32', '203.0.0.0/16'"),
     "wireguard.prefixes[0]: inside the WAN subnet 203.0.113.0/24 (wan.address)"),
    (STATIC + WG + prefixes("203.0.0.0/16") + peer("'10.7.0.1/32', '203.0.0.0/16'"),
     "wireguard.prefixes[0]: contains the WAN subnet 203.0.113.0/24 (wan.address)"),
    (WG + prefixes("198.51.100.0/24") + peer("'10.7.0.1/32', '198.51.100.0/24'",
                                             extra="endpoint = '198.51.100.7:51820'\n"),
     "wireguard.prefixes[0]: covers the endpoint of wireguard.peer[0] (198.51.100.7): the "
     "tunnel's own packets would loop into it"),
    (WG + prefixes("2001:db8::/32") + peer("'10.7.0.1/32', '2001:db8::/32'",
                                           extra="endpoint = '[2001:db8::7]:51820'\n"),
     "wireguard.prefixes[0]: covers the endpoint of wireguard.peer[0] (2001:db8::7)"),
    (WG + prefixes("0.0.0.0/0") + peer("'0.0.0.0/0'"),
     "wireguard.prefixes[0]: the default route: use route = \"all\""),
    # allowed_ips on the router's own links
    (LAN + WG + peer("'10.7.0.1/32', '192.168.77.0/24'"),
     "wireguard.peer[0].allowed_ips[1]: is the LAN 192.168.77.0/24 (lan.address): those "
     "addresses are on the router's own link, not behind this peer"),
    (LAN + WG + peer("'10.7.0.1/32', '192.168.77.7/32'"),
     "wireguard.peer[0].allowed_ips[1]: inside the LAN 192.168.77.0/24 (lan.address)"),
    (STATIC + WG + peer("'203.0.113.0/25'"),
     "wireguard.peer[0].allowed_ips[0]: inside the WAN subnet 203.0.113.0/24 (wan.address)"),
    # an endpoint reached through the tunnel itself
    (WG + peer(extra="endpoint = '10.7.0.1:51820'\n"),
     "wireguard.peer[0].endpoint: inside the tunnel's own subnet 10.7.0.0/24 "
     "(wireguard.address[0]): the tunnel's own packets would loop into it"),
    # gateways that are no gateway
    ("[wan]\nmode = 'static'\naddress = '203.0.113.2/24'\ngateway = '203.0.113.2'\n",
     "wan.gateway: is the router's own address (wan.address)"),
    ("[wan]\nmode = 'static'\naddress = '203.0.113.2/24'\ngateway = '203.0.113.0'\n",
     "wan.gateway: is the network address of 203.0.113.0/24, not a host"),
    ("[wan]\nmode = 'static'\naddress = '203.0.113.2/24'\ngateway = '203.0.113.255'\n",
     "wan.gateway: is the broadcast address of 203.0.113.0/24, not a host"),
    ("[wan]\nmode = 'static'\naddress = '203.0.113.2/32'\ngateway = '203.0.113.2'\n",
     "wan.gateway: is the router's own address (wan.address)"),
    ("[wan]\nmode = 'static'\naddress = '2001:db8::2/64'\ngateway = '2001:db8::2'\n",
     "wan.gateway: is the router's own address (wan.address)"),
    ("[wan]\nmode = 'static'\naddress = '203.0.113.2/30'\ngateway = '203.0.113.9'\n",
     "wan.gateway: not inside 203.0.113.0/30"),
    # IPv6 on the LAN
    ("[lan]\naddress = 'fd00:77::1/64'\n",
     "lan.address: an IPv6 address: lan.address is the IPv4 LAN (DHCPv4); the LAN's IPv6 "
     "address goes in lan.address6 (a /64, like 2001:db8:100:1::1/64)"),
])
def test_relations_that_would_cut_the_router_off(text, expected):
    found = problems(text)
    assert len(found) == 1, found
    assert found[0].startswith(expected), found


@pytest.mark.parametrize("text", [
    # the full tunnel: 0.0.0.0/0 and ::/0 in allowed_ips with route = all
    LAN + STATIC + WG + "route = 'all'\n" + peer("'0.0.0.0/0', '::/0'",
                                                  extra="endpoint = '198.51.100.7:51820'\n"),
    # allowed_ips are never routed: containing the LAN or an endpoint is fine
    LAN + WG + peer("'0.0.0.0/0'", extra="endpoint = '198.51.100.7:51820'\n"),
    LAN + WG + prefixes("172.31.0.0/16") + peer("'10.7.0.1/32', '172.16.0.0/12'"),
    # a prefix next to the LAN, and an endpoint by host name
    LAN + WG + prefixes("192.168.78.0/24") + peer("'10.7.0.1/32', '192.168.78.0/24'",
                                                  extra="endpoint = 'hub.example.net:51820'\n"),
    # an endpoint on the WAN subnet, a prefix elsewhere
    STATIC + WG + prefixes("172.31.77.0/24") + peer(
        "'10.7.0.1/32', '172.31.77.0/24'", extra="endpoint = '203.0.113.9:51820'\n"),
])
def test_what_keeps_working(text):
    load_text(text)


@pytest.mark.parametrize(("address", "gateway"), [
    ("203.0.113.2/32", "203.0.113.1"),  # a VPS's on-link gateway
    ("203.0.113.2/32", "198.51.100.1"),
    ("2001:db8::2/128", "2001:db8::1"),
    ("2001:db8::2/64", "fe80::1"),
    ("203.0.113.2/31", "203.0.113.3"),
    ("203.0.113.2/24", "203.0.113.254"),
])
def test_good_static_wans(address, gateway):
    cfg = load_text(f"[wan]\nmode = 'static'\naddress = '{address}'\ngateway = '{gateway}'\n")
    assert (cfg.wan.address, cfg.wan.gateway) == (address, gateway)


@pytest.mark.parametrize("lease", ["2m", "120", "12h", "7d", "52w", "365d", "infinite"])
def test_good_leases(lease):
    assert load_text(f"[lan]\ndhcp_lease = '{lease}'\n").lan.dhcp_lease == lease


# --- the overlap sweep against the obvious quadratic check -------------------------
networks = st.one_of(
    st.tuples(st.integers(0, 255), st.integers(0, 255), st.integers(8, 32)).map(
        lambda t: ipaddress.ip_network(f"10.{t[0]}.{t[1]}.0/{t[2]}", strict=False)),
    st.tuples(st.integers(0, 15), st.integers(0, 128)).map(
        lambda t: ipaddress.ip_network(f"2001:db8:{t[0]:x}::/{t[1]}", strict=False)),
    st.sampled_from([ipaddress.ip_network("0.0.0.0/0"), ipaddress.ip_network("::/0")]))


@settings(max_examples=300, deadline=None)
@given(st.lists(networks, max_size=25))
def test_earliest_overlaps_is_the_quadratic_answer(nets):
    expected = {}
    for i, net in enumerate(nets):
        earlier = [k for k in range(i) if nets[k].version == net.version
                   and nets[k].overlaps(net)]
        if earlier:
            expected[i] = earlier[0]
    assert earliest_overlaps(nets) == expected


@settings(max_examples=300, deadline=None)
@given(st.lists(networks, max_size=25), networks)
def test_netset_finds_every_container(nets, probe):
    holders = [i for i, n in enumerate(nets) if n.version == probe.version
               and probe.subnet_of(n)]
    firsts = sorted({nets.index(nets[i]) for i in holders})
    found = NetSet(nets).containers(probe)
    assert sorted(found) == firsts
    assert [nets[i].prefixlen for i in found] == sorted(
        (nets[i].prefixlen for i in found), reverse=True)
    assert NetSet(nets).container(probe) == (found[0] if found else None)


def test_every_prefix_covering_an_endpoint_is_named():
    text = WG + prefixes("198.51.0.0/16", "198.51.100.0/24") + peer(
        "'10.7.0.1/32', '198.51.0.0/16'", extra="endpoint = '198.51.100.7:51820'\n")
    assert [p.split(":")[0] for p in problems(text)] == ["wireguard.prefixes[0]",
                                                          "wireguard.prefixes[1]"]


def test_a_3000_peer_hub_loads_in_under_2_seconds():
    text = hub_config(3000)
    start = time.process_time()  # this process's CPU: other load on the machine aside
    cfg = load_text(text)
    assert len(cfg.wireguard.peer) == 3000
    assert time.process_time() - start < 2.0


def test_overlaps_in_a_big_hub_are_still_found():
    text = hub_config(3000) + peer("'172.16.5.128/25'", key=KEY_B)
    assert problems(text) == ["wireguard.peer[3000].allowed_ips[0]: overlaps 172.16.5.0/24 of "
                              "wireguard.peer[5]"]
