"""Addresses and prefixes are parsed strictly (keel.config.netsets): an IPv6
zone id ('%' and anything after it, newlines included), white space, a
control or non-ASCII character, a netmask for a prefix length: each is
refused at its key, for every address key of the schema. Python's ipaddress
alone takes a zone id, and such text reached the WireGuard config and `ip`."""

from __future__ import annotations

import copy
import tomllib
from typing import Any

import pytest

from keel.config import checks, netsets, paths
from keel.config.describe import walk
from keel.config.dump import toml_string
from keel.config.errors import ConfigError
from keel.config.load import load_text

ADDRESS_SYNTAXES = ("address", "interface_address", "prefix", "endpoint",
                    "interface_address6", "prefix6")


def address_keys() -> list[tuple[str, str]]:
    """(path, syntax) of every key of the schema that holds an address, a
    prefix or an endpoint (arrays included): read from the schema, so a key
    added later is covered."""
    out = []
    for info in walk():
        rule = info.item or info.rule
        if rule.syntax in ADDRESS_SYNTAXES:
            out.append((info.path, rule.syntax))
    return out


def full_base() -> dict[str, Any]:
    """A valid config with every address key present: the edge example with
    a static WAN."""
    data = tomllib.loads(paths.example_text("edge"))
    data["wan"].update(mode="static", address="203.0.113.7/24", gateway="203.0.113.1")
    # IPv6: the LAN's /64 through the hub (::/0 in its allowed_ips), a routed prefix
    data["lan"]["address6"] = "2001:db8:100:1::1/64"
    data["wireguard"]["peer"][0]["allowed_ips"].append("::/0")
    data["ipv6"] = {"routed_prefix": "2001:db8:200::/56"}
    return data


BASE = full_base()


def put(data: dict[str, Any], path: str, value: str) -> str:
    """Set `value` at a schema path (the first peer for peer[], the first
    element of an array); the path as a problem names it."""
    node: Any = data
    parts = path.split(".")
    shown = []
    for part in parts[:-1]:
        if part.endswith("[]"):
            node = node[part[:-2]][0]
            shown.append(f"{part[:-2]}[0]")
        else:
            node = node[part]
            shown.append(part)
    last = parts[-1]
    shown.append(last)
    if isinstance(node.get(last), list):
        node[last] = [value, *node[last][1:]]
        return ".".join(shown) + "[0]"
    node[last] = value
    return ".".join(shown)


def refused(path: str, value: str) -> tuple[str, list[str]]:
    data = copy.deepcopy(BASE)
    where = put(data, path, value)
    try:
        load_text(_toml(data))
    except ConfigError as err:
        return where, [p.reason for p in err.problems if p.path == where]
    return where, []


def _toml(data: dict[str, Any]) -> str:
    def value(v: Any) -> str:
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, int):
            return str(v)
        if isinstance(v, str):
            return toml_string(v)
        if isinstance(v, list):
            return "[" + ", ".join(value(x) for x in v) + "]"
        return "{" + ", ".join(f"{toml_string(k)} = {value(x)}" for k, x in v.items()) + "}"

    return "".join(f"{toml_string(k)} = {value(v)}\n" for k, v in data.items())


def test_the_base_is_valid_and_holds_every_address_key():
    load_text(_toml(BASE))
    assert {p for p, _ in address_keys()} >= {
        "wan.address", "wan.gateway", "lan.address", "lan.dhcp_start", "lan.dhcp_end",
        "wireguard.address", "wireguard.prefixes", "wireguard.peer[].allowed_ips",
        "wireguard.peer[].endpoint", "lan.address6", "ipv6.routed_prefix"}


# a valid value of each syntax, and where in it the odd text goes
GOOD = {"address": "203.0.113.1", "interface_address": "10.77.0.2/24",
        "prefix": "172.31.77.0/24", "endpoint": "203.0.113.2:51820",
        "interface_address6": "2001:db8:100:1::1/64", "prefix6": "2001:db8:200::/56"}
V6 = {"address": "fe80::1{}", "interface_address": "fd00::2{}/64",
      "prefix": "fd00::{}/64", "endpoint": "[fe80::1{}]:51820",
      "interface_address6": "2001:db8:100:1::1{}/64", "prefix6": "2001:db8:200::{}/56"}


@pytest.mark.parametrize(("path", "syntax"), address_keys())
@pytest.mark.parametrize("zone", ["%eth0", "%eth0\nPostUp = id", "%", "%\x1b[2J", "%0"])
def test_a_zone_id_is_refused_at_every_address_key(path, syntax, zone):
    where, reasons = refused(path, V6[syntax].format(zone))
    assert reasons and "zone id" in reasons[0], (where, reasons)
    assert all(ch.isprintable() for r in reasons for ch in r)


ODD = ["\n", "\r", "\t", " ", "\x0b", "\x0c", "\x1c", "\x85", "\u2028", "\u00a0", "\x00",
       "\x1b", "\u202e", "\ufeff"]


@pytest.mark.parametrize(("path", "syntax"), address_keys())
@pytest.mark.parametrize("odd", ODD, ids=[f"U+{ord(c):04X}" for c in ODD])
def test_white_space_and_controls_are_refused_at_every_address_key(path, syntax, odd):
    good = GOOD[syntax]
    for value in (good + odd, odd + good):
        where, reasons = refused(path, value)
        assert reasons, (where, value)
        assert all(ch.isprintable() for r in reasons for ch in r), reasons


def test_a_netmask_or_a_padded_length_is_not_a_prefix_length():
    for value in ("172.31.77.0/255.255.255.0", "172.31.77.0/0.0.0.255", "172.31.77.0/024"):
        assert checks.prefix(value), value
    assert checks.interface_address("10.77.0.2/255.255.255.0")


def test_an_endpoint_port_is_ascii_digits():
    assert checks.endpoint("203.0.113.2:\uff15\uff11\uff18\uff12\uff10")  # fullwidth
    assert checks.endpoint("hub.example:\u0665\u0661\u0668\u0662\u0660")  # Arabic-Indic
    assert checks.endpoint("\u0661.\u0662.\u0663.\u0664:51820")
    assert checks.endpoint("[fe80::1%eth0]:51820")
    assert checks.endpoint("[192.0.2.1]:51820")
    assert checks.endpoint("203.0.113.2:51820") is None
    assert checks.endpoint("[2001:db8::1]:51820") is None


def test_the_strict_parsers_take_plain_literals():
    assert str(netsets.address("2001:DB8::1")) == "2001:db8::1"
    assert str(netsets.address("::ffff:192.0.2.1")) == "::ffff:c000:201"
    assert str(netsets.interface("10.77.0.2/24")) == "10.77.0.2/24"
    assert str(netsets.network("0.0.0.0/0")) == "0.0.0.0/0"
    assert str(netsets.network("::/0")) == "::/0"
    for bad in ("fe80::1%eth0", "10.0.0.1\n", "10.0.0.1/24", "", "x" * 60):
        with pytest.raises(netsets.IpTextError):
            netsets.address(bad)
    for bad in ("fe80::%1/64", "10.0.0.0/24\n", "10.0.0.0", "10.0.0.1/24", "10.0.0.0/ 24"):
        with pytest.raises(netsets.IpTextError):
            netsets.network(bad)
    with pytest.raises(netsets.IpTextError, match="needs a prefix length"):
        netsets.interface("10.0.0.1")
