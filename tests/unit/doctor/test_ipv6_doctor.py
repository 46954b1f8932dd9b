"""keel doctor's IPv6: the parser of `ip -6 -j addr show` (strict, any
text gives its addresses or ValueError) and the checks: dhcpcd running,
the WAN's SLAAC address and default route, the LANs' delegated and static
/64s."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from keel.doctor.checks import FAIL, INFO, OK, WARN
from keel.doctor.ipv6 import check_ipv6
from keel.model import Lan, RouterModel, Wan
from keel.system.ipv6 import FOREVER, Address6, parse_addresses6

# as this host's `ip -6 -j addr show` prints it (iproute2 6.1)
LISTING = json.dumps([
    {"ifindex": 1, "ifname": "lo", "addr_info": [
        {"family": "inet6", "local": "::1", "prefixlen": 128, "scope": "host",
         "valid_life_time": FOREVER, "preferred_life_time": FOREVER}]},
    {"ifindex": 2, "ifname": "eth0", "addr_info": [
        {"family": "inet6", "local": "2001:db8:5::a", "prefixlen": 64, "scope": "global",
         "dynamic": True, "mngtmpaddr": True, "valid_life_time": 86390,
         "preferred_life_time": 14390},
        {"family": "inet6", "local": "fe80::1", "prefixlen": 64, "scope": "link",
         "valid_life_time": FOREVER, "preferred_life_time": FOREVER}]},
    {"ifindex": 3, "ifname": "eth1", "addr_info": [
        {"family": "inet6", "local": "2001:db8:100:1::1", "prefixlen": 64, "scope": "global",
         "valid_life_time": FOREVER, "preferred_life_time": FOREVER},
        {"family": "inet6", "local": "2001:db8:1200::1", "prefixlen": 64, "scope": "global",
         "valid_life_time": 7000, "preferred_life_time": 3400}]},
])
MODEL = RouterModel(wans=(Wan("eth0", ipv6="auto"),),
                    lans=(Lan("eth1", "192.168.77.1/24", address6="2001:db8:100:1::1/64",
                              ipv6_from_wan=True),))


def test_the_listing_gives_each_interfaces_global_addresses():
    found = parse_addresses6(LISTING)
    assert found["lo"] == () and found["eth0"] == (Address6("2001:db8:5::a/64", 86390, 14390),)
    static, given_ = found["eth1"]
    assert static.static and not given_.static and given_.valid_s == 7000


def test_all_in_place():
    checks = check_ipv6(MODEL, parse_addresses6(LISTING), ("fe80::1", "eth0"), True)
    assert [(c.name, c.status) for c in checks] == [
        ("dhcpcd", OK), ("eth0", OK), ("eth1", OK), ("eth1 delegated", OK)]
    assert "default route via fe80::1" in checks[1].detail
    assert checks[3].detail == "2001:db8:1200::1/64 (valid 7000 s)"


def test_what_the_provider_has_not_given_warns_what_keel_missed_fails():
    checks = check_ipv6(MODEL, {"eth0": (), "eth1": ()}, None, False)
    assert [(c.name, c.status) for c in checks] == [
        ("dhcpcd", FAIL), ("eth0", WARN), ("eth1", FAIL), ("eth1 delegated", WARN)]


def test_a_prefix_no_lan_takes_and_ipv6_off():
    alone = RouterModel(wans=(Wan("eth0", ipv6="auto"),), lans=(Lan("eth1", "10.0.0.1/24"),))
    names = [(c.name, c.status) for c in check_ipv6(alone, {}, None, True)]
    assert ("delegated prefix", INFO) in names
    assert check_ipv6(RouterModel(wans=(Wan("eth0"),)), {}, None, False) == []


@pytest.mark.parametrize("bad", ["{}", '[{"addr_info": []}]', '[{"ifname": "x", "addr_info": '
                                 '[{"scope": "global", "local": "1.2.3.4"}]}]',
                                 '[{"ifname": "x", "addr_info": [{"scope": "global", '
                                 '"local": "2001:db8::1", "valid_life_time": -1}]}]', "nope"])
def test_what_is_not_the_listing_is_refused(bad):
    with pytest.raises(ValueError):
        parse_addresses6(bad)


@given(st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=40),
                    lambda kids: st.lists(kids, max_size=4)
                    | st.dictionaries(st.sampled_from(["ifname", "addr_info", "scope", "local",
                                                       "prefixlen", "valid_life_time"]),
                                      kids, max_size=5), max_leaves=30))
def test_any_json_gives_addresses_or_value_error(data):
    try:
        found = parse_addresses6(json.dumps(data))
    except ValueError:
        return
    for addresses in found.values():
        assert all(0 <= a.valid_s <= FOREVER for a in addresses)
