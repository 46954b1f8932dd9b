"""The NICs the setup wizard lists: `ip -j -d addr show` captured on a
virtio guest (tests/fixtures/lab/ip-addr-vm.json: lo, two ifb devices, eth0
with an IPv4, a ULA and a link-local address), and variants of it."""

from __future__ import annotations

import copy
import json

import pytest

from keel.parse.ipaddr import link_state, parse_ip_addr, uevent_driver
from keel.system.nics import IP_ADDR, read_driver, read_nics
from keel.system.source import FixtureSource, SourceError
from tests.fixtures.sources import lab

CAPTURE = json.loads(lab("ip-addr-vm.json"))


def test_only_links_that_can_be_a_wan_or_a_lan():
    nics = parse_ip_addr(CAPTURE)
    assert [n.name for n in nics] == ["eth0"]  # not lo, not the ifb devices
    eth0 = nics[0]
    assert eth0.mac == "02:fc:00:00:00:01"
    assert eth0.state == "up"
    assert eth0.addresses == ("192.0.2.2/24", "fd00::2/64")  # no link-local
    assert eth0.ipv4 == ("192.0.2.2/24",)
    assert eth0.kind == "" and eth0.driver == ""


def test_wireguard_and_bridges():
    data = copy.deepcopy(CAPTURE)
    wg = {"ifname": "wg0", "flags": ["POINTOPOINT", "NOARP", "UP", "LOWER_UP"],
          "link_type": "none", "linkinfo": {"info_kind": "wireguard"}, "addr_info": []}
    br = copy.deepcopy(data[-1]) | {"ifname": "br0", "linkinfo": {"info_kind": "bridge"},
                                    "addr_info": []}
    assert [(n.name, n.kind) for n in parse_ip_addr([*data, wg, br])] == [
        ("eth0", ""), ("br0", "bridge")]


@pytest.mark.parametrize(("flags", "operstate", "state"), [
    (["BROADCAST", "MULTICAST", "UP", "LOWER_UP"], "UP", "up"),
    (["NO-CARRIER", "BROADCAST", "MULTICAST", "UP"], "DOWN", "no carrier"),
    (["BROADCAST", "MULTICAST"], "DOWN", "down"),
    (["BROADCAST", "MULTICAST", "UP"], "DORMANT", "dormant"),
])
def test_link_state(flags, operstate, state):
    assert link_state({"flags": flags, "operstate": operstate}) == state


def test_driver_from_the_device_uevent():
    assert uevent_driver("DRIVER=virtio_net\nMODALIAS=virtio:d00000001v00001AF4\n") == \
        "virtio_net"
    assert uevent_driver("MODALIAS=x\n") == ""


def test_read_nics_adds_each_driver():
    source = FixtureSource(
        files={"/sys/class/net/eth0/device/uevent": "DRIVER=virtio_net\n"},
        commands={IP_ADDR: lab("ip-addr-vm.json")})
    (eth0,) = read_nics(source)
    assert eth0.driver == "virtio_net"
    assert read_driver("ifb0", source) == ""  # virtual: no device


def test_read_nics_says_when_ip_fails_or_prints_nonsense():
    with pytest.raises(SourceError):
        read_nics(FixtureSource())
    with pytest.raises(SourceError, match="not what ip prints"):
        read_nics(FixtureSource(commands={IP_ADDR: "Error: nonsense"}))
    assert read_nics(FixtureSource(commands={IP_ADDR: ""})) == []
