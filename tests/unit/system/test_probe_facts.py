"""The facts the probes to a peer are chosen and run by: ping's argv for
each family (and the tunnel's fwmark), the IPv6 default route and whether
the WAN has IPv6 (keel.system.ipv6), the tunnels' own networks
(keel.system.wireguard). Parsers on captured output (tests/fixtures/netns:
tests/fixtures/capture_ping6.py) and on anything: a result or ValueError."""

from __future__ import annotations

import ipaddress
import json
import subprocess
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from keel.system.ipv6 import (
    ADDR6,
    DEFAULT6,
    FOREVER,
    Address6,
    parse_default6,
    read_default6,
    read_wan_ipv6,
    wan_has_ipv6,
)
from keel.system.ping import df_argv, family, ping_argv
from keel.system.source import FixtureSource
from keel.system.wireguard import IP_ADDR, parse_networks, read_tunnel_networks

NETNS = Path(__file__).resolve().parents[2] / "fixtures" / "netns"


def capture(name: str) -> str:
    return (NETNS / name).read_text()


# --- ping's argv ------------------------------------------------------------

def test_ping_argv_of_each_family():
    assert ping_argv("10.99.0.2") == ["ping", "-D", "-O", "-n", "-i", "0.2", "10.99.0.2"]
    assert ping_argv("fd00:77::2", 0.1) == ["ping", "-6", "-D", "-O", "-n", "-i", "0.1",
                                            "fd00:77::2"]
    assert ping_argv("2001:db8::1", mark=51820)[-3:] == ["-m", "51820", "2001:db8::1"]
    with pytest.raises(ValueError):
        family("hub.example")


def test_a_df_probe_counts_each_familys_headers():
    """`-s` is the payload: the probe of a 1500-byte MTU is 1500 bytes in all."""
    assert df_argv("192.0.2.2", 1500) == ["ping", "-M", "do", "-n", "-c", "1", "-W", "1",
                                          "-s", "1472", "192.0.2.2"]
    assert df_argv("2001:db8::1", 1500, 51820) == [
        "ping", "-6", "-M", "do", "-n", "-c", "1", "-W", "1", "-m", "51820", "-s", "1452",
        "2001:db8::1"]


# --- the IPv6 default route ---------------------------------------------------

def test_default_routes_as_ip_prints_them():
    assert parse_default6(capture("ip-route-default6.json")) == ("fd00:5::2", "a0")
    assert parse_default6(capture("ip-route-default6-multipath.json")) == ("fd00:5::2", "a0")
    assert parse_default6(capture("ip-route-default6-none.json")) is None
    assert parse_default6(capture("ip-route-default6-unreachable.json")) is None
    assert parse_default6('[{"dst": "default", "dev": "ppp0"}]') == ("", "ppp0")


@pytest.mark.parametrize("text", ["{}", "[1]", '[{"dst": "default"}]',
                                  '[{"dst": "default", "dev": 3}]',
                                  '[{"nexthops": "x"}]', "not json"])
def test_a_default_route_listing_that_is_not_one(text):
    with pytest.raises(ValueError):
        parse_default6(text)


JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=8),
                    lambda inner: st.lists(inner, max_size=4)
                    | st.dictionaries(st.sampled_from(
                        ["dst", "dev", "gateway", "type", "nexthops", "ifname", "addr_info",
                         "family", "local", "prefixlen", "scope"]), inner, max_size=5),
                    max_leaves=20)


@given(JSON)
def test_parse_default6_of_anything(data):
    try:
        got = parse_default6(json.dumps(data))
    except ValueError:
        return
    assert got is None or (isinstance(got[0], str) and got[1])


def test_read_default6_through_a_runner():
    class Runner:
        def run(self, argv, check=True):
            assert argv == list(DEFAULT6) and check is False
            return subprocess.CompletedProcess(argv, 0, capture("ip-route-default6.json"), "")

    assert read_default6(Runner()) == ("fd00:5::2", "a0")  # type: ignore[arg-type]


# --- whether the WAN has IPv6 ---------------------------------------------------

SLAAC = Address6("2001:db8:5::7/64", 3000, 1000)
STATIC = Address6("2001:db8:100:1::1/64", FOREVER, FOREVER)
DELEGATED = Address6("2001:db8:110::1/64", 3000, 1000)


@pytest.mark.parametrize(("addresses", "default", "has"), [
    ({"eth0": (SLAAC,)}, ("fe80::1", "eth0"), True),  # SLAAC on the WAN
    ({"eth0": (STATIC,)}, ("2001:db8:5::1", "eth0"), True),  # a static WAN address
    ({"eth0": (SLAAC,)}, None, False),  # no default route
    ({"eth0": ()}, ("fe80::1", "eth0"), False),  # a route, no address to send from
    ({"eth0": (), "eth1": (DELEGATED,)}, ("fe80::1", "eth0"), True),  # PD only
    ({"eth0": (), "eth1": (STATIC,)}, ("fe80::1", "eth0"), False),  # the hub's prefix
    ({"wg0": (SLAAC,)}, ("", "wg0"), False),  # into the tunnel
    ({"eth0": (), "wg0": (DELEGATED,)}, ("fe80::1", "eth0"), False),
])
def test_wan_has_ipv6(addresses, default, has):
    assert wan_has_ipv6(addresses, default, {"wg0"}) is has


def test_read_wan_ipv6_from_ip():
    listing = json.dumps([{"ifname": "a0", "addr_info": [
        {"family": "inet6", "local": "2001:db8:5::7", "prefixlen": 64, "scope": "global",
         "valid_life_time": 3000, "preferred_life_time": 1000}]}])
    source = FixtureSource(commands={ADDR6: listing,
                                     DEFAULT6: capture("ip-route-default6.json")})
    assert read_wan_ipv6(source) is True
    assert read_wan_ipv6(source, {"a0"}) is False
    assert read_wan_ipv6(FixtureSource()) is False  # ip cannot tell: no


# --- the tunnels' own networks ------------------------------------------------------

def test_the_networks_of_named_interfaces():
    got = parse_networks(capture("ip-addr-a.json"), {"a0", "wg0"})
    assert got == {"a0": (ipaddress.ip_network("10.5.0.0/24"),
                          ipaddress.ip_network("fd00:5::/64"))}  # not the link-local one
    assert parse_networks("[{}, {}]", {"a0"}) == {}  # what ip prints for filtered ones
    source = FixtureSource(commands={IP_ADDR: capture("ip-addr-a.json")})
    assert read_tunnel_networks({"lo"}, source) == {"lo": ()}
    assert read_tunnel_networks({"lo"}, FixtureSource()) is None


@pytest.mark.parametrize(("entry", "why"), [
    ({"addr_info": []}, "without a name"),
    ({"ifname": "wg0", "addr_info": {}}, "not a list"),
    ({"ifname": "wg0", "addr_info": [3]}, "not an object"),
    ({"ifname": "wg0", "addr_info": [{"family": "inet", "scope": "global"}]}, "without local"),
    ({"ifname": "wg0", "addr_info": [{"family": "inet", "scope": "global",
                                      "local": "fe80::1%wg0", "prefixlen": 64}]}, "not an"),
    ({"ifname": "wg0", "addr_info": [{"family": "inet", "scope": "global",
                                      "local": "fd00::1", "prefixlen": 64}]}, "family inet"),
    ({"ifname": "wg0", "addr_info": [{"family": "inet", "scope": "global",
                                      "local": "10.0.0.1", "prefixlen": 33}]}, "does not appear"),
])
def test_a_listing_that_is_not_one_says_what(entry, why):
    with pytest.raises(ValueError, match=why):
        parse_networks(json.dumps([entry]), {"wg0"})


@given(JSON)
def test_parse_networks_of_anything(data):
    try:
        got = parse_networks(json.dumps(data), {"wg0", "", "a"})
    except ValueError:
        return
    assert all(isinstance(n, ipaddress.IPv4Network | ipaddress.IPv6Network)
               for nets in got.values() for n in nets)


@given(st.lists(st.tuples(st.ip_addresses(), st.integers(0, 128)), max_size=6))
def test_networks_round_trip(addresses):
    infos = [{"family": "inet6" if a.version == 6 else "inet", "local": str(a),
              "prefixlen": min(n, a.max_prefixlen), "scope": "global"} for a, n in addresses]
    got = parse_networks(json.dumps([{"ifname": "wg0", "addr_info": infos}]), {"wg0"})
    assert got["wg0"] == tuple(ipaddress.ip_interface(f"{a}/{min(n, a.max_prefixlen)}").network
                               for a, n in addresses)
