"""IPv6 in keel.toml, the values alone: the keys of the schema (wan.ipv6,
wan.ipv6_pd_length, lan.address6, lan.ipv6_from_wan, [ipv6]), the two new
syntaxes (interface_address6, prefix6) and IPv6 forward targets, each
through the loader with its key path and reason; then hypothesis properties
of the three parsers: they never raise, never take a zone id, a control
character or a length out of range, and what they take round-trips."""

from __future__ import annotations

import ipaddress

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from keel.config import checks
from keel.config.checks import (
    MAX_TARGET_TEXT,
    forward_target,
    interface_address6,
    parse_target,
    prefix6,
    space6,
)
from keel.config.describe import walk
from keel.config.load import load_text
from keel.config.netsets import MAX_IP_TEXT
from keel.config.schema import Config
from tests.unit.config.test_forwards import only

KEY_A = "HlOu1tgN6jIPCqo/B9y+b7TT1bltyagEMGZGjSZNPVI="
KEY_B = "DGDJOoNeCQAxEAKW/6R/XQpwi4FNhdoJTo1LLorzzRg="

# the edge: its LAN's /64 from the hub, which has ::/0 in its allowed_ips
EDGE6 = f"""
[system]
hostname = "edge"

[lan]
address = "192.168.77.1/24"
address6 = "2001:db8:100:1::1/64"

[wireguard]
enabled = true
address = ["10.77.0.2/24"]

[[wireguard.peer]]
name = "hub"
public_key = "{KEY_B}"
endpoint = "203.0.113.2:51820"
allowed_ips = ["10.77.0.1/32", "::/0"]
"""

# the hub: a routed /56, the edge's /64 of it in the edge's allowed_ips
HUB6 = f"""
[system]
hostname = "hub"

[wan]
mode = "static"
address = "203.0.113.2/24"
gateway = "203.0.113.1"

[ipv6]
routed_prefix = "2001:db8:100::/56"

[wireguard]
enabled = true
address = ["10.77.0.1/24"]
route = "prefixes"
prefixes = ["192.168.77.0/24"]

[[wireguard.peer]]
name = "edge"
public_key = "{KEY_A}"
allowed_ips = ["10.77.0.2/32", "192.168.77.0/24", "2001:db8:100:1::/64"]
"""



def with_address6(value: str) -> str:
    return EDGE6.replace('address6 = "2001:db8:100:1::1/64"', f'address6 = "{value}"')


def with_routed(value: str) -> str:
    return HUB6.replace('routed_prefix = "2001:db8:100::/56"', f'routed_prefix = "{value}"')


def with_forward(to: str, port: int = 8080) -> str:
    return HUB6 + f'\n[[forward]]\nname = "web"\nport = {port}\nto = "{to}"\nvia = "edge"\n'


# --- the schema ------------------------------------------------------------------------


def test_the_defaults_are_a_home_routers():
    cfg = Config()
    assert (cfg.wan.ipv6, cfg.wan.ipv6_pd_length) == ("auto", 56)
    assert (cfg.ipv6.routed_prefix, cfg.ipv6.ndp_proxy) == (None, False)
    lan = load_text("[lan]\n").lan
    assert lan is not None and lan.address6 is None and lan.ipv6_from_wan


def test_the_schema_describes_the_keys():
    by_path = {info.path: info for info in walk()}
    assert by_path["wan.ipv6"].allowed == "one of auto, off"
    assert by_path["wan.ipv6_pd_length"].allowed == "48..64 bits"
    assert by_path["lan.address6"].allowed == "interface address6"
    assert by_path["lan.ipv6_from_wan"].default is True
    assert by_path["ipv6"].type == "table"
    assert by_path["ipv6.routed_prefix"].allowed == "prefix6"
    assert by_path["ipv6.ndp_proxy"].default is False
    assert checks.SYNTAXES["interface_address6"] is interface_address6
    assert checks.SYNTAXES["prefix6"] is prefix6
    for path in ("wan.ipv6", "lan.address6", "ipv6.routed_prefix", "ipv6.ndp_proxy"):
        assert by_path[path].doc, path


@pytest.mark.parametrize(("text", "expected"), [
    ("[wan]\nipv6 = 'on'\n", "wan.ipv6: must be one of: auto, off"),
    ("[wan]\nipv6 = true\n", "wan.ipv6: must be a string, not true or false"),
    ("[wan]\nipv6_pd_length = 47\n", "wan.ipv6_pd_length: outside 48-64 bits"),
    ("[wan]\nipv6_pd_length = 65\n", "wan.ipv6_pd_length: outside 48-64 bits"),
    ("[lan]\nipv6_from_wan = 'yes'\n", "lan.ipv6_from_wan: must be true or false, not a string"),
    ("[ipv6]\nndp_proxy = 1\n", "ipv6.ndp_proxy: must be true or false, not an integer"),
    ("[ipv6]\nrouted = '2001:db8::/48'\n", "ipv6.routed: unknown key (did you mean "
                                           "'routed_prefix'?)"),
])
def test_a_bad_value_is_named_at_its_key(text, expected):
    assert only(text) == expected


@pytest.mark.parametrize("length", [48, 56, 60, 64])
def test_every_pd_length_in_range_loads(length):
    assert load_text(f"[wan]\nipv6_pd_length = {length}\n").wan.ipv6_pd_length == length


# --- lan.address6: interface_address6 --------------------------------------------------


@pytest.mark.parametrize("value", ["2001:db8:100:1::1/64", "fd00:77::1/64",
                                   "2001:DB8:100:1::1/64", "2001:db8:100:1:0:0:0:1/64",
                                   "2a01:4f8:1:2:3:4:5:6/64", "fdff:ffff:ffff:ffff::1/64"])
def test_a_good_lan_address6_loads(value):
    assert load_text(with_address6(value)).lan.address6 == value


@pytest.mark.parametrize(("value", "reason"), [
    ("2001:db8:100:1::1/80", "/80: an IPv6 prefix longer than /64 for a LAN (SLAAC needs "
                             "exactly /64)"),
    ("2001:db8:100:1::1/128", "/128: an IPv6 prefix longer than /64 for a LAN"),
    ("2001:db8:100:1::1/56", "/56: an IPv6 prefix shorter than /64 for a LAN (a LAN is one "
                             "/64: SLAAC needs exactly /64)"),
    ("192.168.78.1/24", "an IPv4 address: give an IPv6 address with its /64, like "
                        "2001:db8:100:1::1/64"),
    ("fe80::1/64", "link-local (fe80::/10: every interface has one of its own, never routed): "
                   "not in global unicast (2000::/3) or unique local (fc00::/7) space"),
    ("ff02::1/64", "multicast (ff00::/8): not in global unicast"),
    ("::1/64", "the loopback address (::1): not in global unicast"),
    ("::/64", "the unspecified address (::): not in global unicast"),
    ("::ffff:192.0.2.1/64", "IPv4-mapped (::ffff:0:0/96): not in global unicast"),
    ("4000::1/64", "not in global unicast (2000::/3) or unique local (fc00::/7) space"),
    ("2001:db8:100:1::/64", "the /64's subnet-router anycast address (its host part all "
                            "zeros), not a host address"),
    ("2001:db8:100:1::1%eth1/64", "zone id ('%' and an interface) is not allowed"),
    ("2001:db8:100:1::1/64\\n", "a control character (\\x0a)"),
    ("2001:db8:100:1::1", "needs a prefix length"),
    ("2001:db8:100:1::1/064", "the prefix length must be a number like /24"),
    ("2001:db8:100:1::1/ffff:ffff:ffff:ffff::", "the prefix length must be a number"),
    ("2001:db8:100:1:2:3:4:5:6/64", "not an address with a prefix length"),
    ("2001:0db8:0100:0001:0000:0000:0000:0001:0001:0001/64",
     f"longer than {MAX_IP_TEXT} characters"),
])
def test_a_bad_lan_address6_is_refused_with_its_reason(value, reason):
    line = only(with_address6(value))
    assert line.startswith("lan.address6: ") and reason in line, line


def test_a_message_never_repeats_the_value():
    line = only(with_address6("2001:db8:100:1::1%evil/64"))
    assert "evil" not in line


# --- [ipv6] routed_prefix: prefix6 -------------------------------------------------------


@pytest.mark.parametrize("value", ["2001:db8:100::/56", "2001:db8::/32", "2001:db8:100:1::/64",
                                   "fd00:77::/48", "2001:DB8:100::/56"])
def test_a_good_routed_prefix_loads(value):
    hub = HUB6.replace('"2001:db8:100:1::/64"', '"fd00:99::/64"').replace(
        'routed_prefix = "2001:db8:100::/56"', f'routed_prefix = "{value}"')
    assert load_text(hub).ipv6.routed_prefix == value


@pytest.mark.parametrize(("value", "reason"), [
    ("2001:db8::/31", "/31: shorter than /32"),
    ("::/0", "/0: shorter than /32"),
    ("2001:db8:100:1::/65", "/65: longer than /64 (an edge's LAN is a whole /64 of it)"),
    ("2001:db8:100::1/56", "host bits set in a prefix"),
    ("203.0.113.0/24", "an IPv4 prefix: give an IPv6 network, like 2001:db8:100::/56"),
    ("fe80::/64", "link-local (fe80::/10"),
    ("ff00::/32", "multicast (ff00::/8)"),
    ("::/32", "not in global unicast (2000::/3) or unique local (fc00::/7) space"),
    ("2001:db8:100::%eth0/56", "zone id"),
    ("2001:db8:100::", "needs a prefix length"),
    (" 2001:db8:100::/56", "a space at character 1"),
])
def test_a_bad_routed_prefix_is_refused_with_its_reason(value, reason):
    line = only(with_routed(value))
    assert line.startswith("ipv6.routed_prefix: ") and reason in line, line


# --- IPv6 in a peer's allowed_ips: the prefix syntax takes it ------------------------------


def test_allowed_ips_take_ipv6():
    cfg = load_text(EDGE6)
    assert cfg.wireguard.peer[0].allowed_ips == ("10.77.0.1/32", "::/0")
    cfg = load_text(HUB6)
    assert cfg.wireguard.peer[0].allowed_ips[-1] == "2001:db8:100:1::/64"
    line = only(HUB6.replace('"2001:db8:100:1::/64"', '"2001:db8:100:1::1/64"'))
    assert line == "wireguard.peer[0].allowed_ips[2]: host bits set in a prefix"


# --- IPv6 forward targets --------------------------------------------------------------------


@pytest.mark.parametrize(("to", "address"), [
    ("[2001:db8:100:1::50]:8080", "2001:db8:100:1::50"),
    ("2001:db8:100:1::50", "2001:db8:100:1::50"),
    ("[2001:DB8:100:1:0:0:0:50]:8080", "2001:db8:100:1::50"),
    ("2001:0db8:0100:0001::0050", "2001:db8:100:1::50"),
])
def test_an_ipv6_target_loads_and_is_canonical(to, address):
    cfg = load_text(with_forward(to))
    assert cfg.forward[0].to == to
    assert parse_target(to)[0] == address


@pytest.mark.parametrize(("to", "reason"), [
    ("[2001:db8:100:1::50]", "[...] is for an IPv6 address with a port: write the address "
                             "alone, or [address]:port"),
    ("[2001:db8:100:1::50]8080", "after ']' comes ':' and the port"),
    ("[2001:db8:100:1::50", "a '[' without its ']'"),
    ("[2001:db8:100:1::50]:", "the port after ']:': not a number"),
    ("[2001:db8:100:1::50]:0", "the port after ']:': a port outside 1-65535"),
    ("[2001:db8:100:1::50]:65536", "the port after ']:': a port outside 1-65535"),
    ("[2001:db8:100:1::50]:080", "the port after ']:': a port is written without leading zeros"),
    ("[2001:db8:100:1::50]: 80", "the port after ']:': not a number"),
    ("[2001:db8:100:1::50%eth1]:8080", "zone id ('%' and an interface) is not allowed"),
    ("2001:db8:100:1::50%eth1", "zone id ('%' and an interface) is not allowed"),
    ("[fe80::50]:8080", "link-local (fe80::/10"),
    ("ff02::1", "multicast (ff00::/8)"),
    ("::1", "the loopback address (::1)"),
    ("::", "the unspecified address (::)"),
    ("::ffff:192.168.77.50", "an IPv4-mapped IPv6 address: write an IPv4 target as A.B.C.D"),
    ("[192.168.77.50]:8080", "an IPv4 target is written without [...]"),
    ("[2001:db8:100:1::50/64]:8080", "a '/': give the address alone"),
    ("[2001:db8:100:1::50\\n]:8080", "a control character (\\x0a)"),
    ("[" + "0:" * 30 + "1]:8080", f"longer than {MAX_TARGET_TEXT} characters"),
])
def test_a_bad_ipv6_target_is_named_at_its_key(to, reason):
    line = only(with_forward(to))
    assert line.startswith("forward[0].to: ") and reason in line, line


# --- properties ------------------------------------------------------------------------------

FAST = settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
ODD = [*"%\n\r\t \x0b\x0c\x00\x1b\x7f\u00a0\ufeff\u202e\u2028\u0085", *"[]:./-+\\\"'\uff11\u0661"]
HEX = "0123456789abcdefABCDEF:."
odd_text = st.text(st.one_of(st.sampled_from(ODD), st.sampled_from(HEX), st.characters()),
                   max_size=60)
GOOD_SPACES = (ipaddress.IPv6Network("2000::/3"), ipaddress.IPv6Network("fc00::/7"))


def in_space(value: int) -> ipaddress.IPv6Address:
    """An address of global unicast or ULA space, from any integer."""
    space = GOOD_SPACES[value & 1]
    host_bits = 128 - space.prefixlen
    return space[(value >> 1) % (1 << host_bits)]


def mutated(valid: list[str]) -> st.SearchStrategy[str]:
    """A valid value with odd text put in, over part of it, or cut."""
    @st.composite
    def mutate(draw: st.DrawFn) -> str:
        base = draw(st.sampled_from(valid))
        i = draw(st.integers(0, len(base)))
        j = draw(st.integers(i, len(base)))
        return base[:i] + draw(st.text(st.one_of(st.sampled_from(ODD), st.sampled_from(HEX)),
                                       max_size=4)) + base[j:]
    return mutate()


def with_lengths(addresses: st.SearchStrategy[ipaddress.IPv6Address | ipaddress.IPv4Address]
                 ) -> st.SearchStrategy[str]:
    return st.tuples(addresses, st.integers(-2, 140)).map(lambda t: f"{t[0]}/{t[1]}")


def clean(value: str) -> bool:
    """What the strict parsers may take: hex digits, ':', '.', '/', '[', ']'."""
    return all(ch in "0123456789abcdefABCDEF:./[]" for ch in value)


def check_reason(reason: str | None) -> None:
    assert reason is None or (isinstance(reason, str) and reason and reason.isprintable())


addresses6 = st.one_of(st.ip_addresses(v=6), st.integers(0, 2**128 - 1).map(in_space))
lan6_values = st.one_of(
    odd_text, with_lengths(st.ip_addresses()), with_lengths(addresses6),
    mutated(["2001:db8:100:1::1/64", "fd00:77::1/64", "fe80::1/64"]))


@FAST
@given(lan6_values)
def test_interface_address6_never_raises_and_what_it_takes_round_trips(value):
    reason = interface_address6(value)
    check_reason(reason)
    if reason is not None:
        return
    assert clean(value) and "%" not in value and len(value) <= MAX_IP_TEXT
    iface = ipaddress.ip_interface(value)
    assert iface.version == 6 and iface.network.prefixlen == 64
    assert space6(iface.ip) is None and iface.ip != iface.network.network_address
    assert interface_address6(str(iface)) is None  # the canonical form is taken too
    assert ipaddress.ip_interface(str(iface)) == iface


@FAST
@given(st.integers(0, 2**128 - 1))
def test_every_global_or_ula_host_of_a_64_is_taken(value):
    addr = in_space(value)
    net = ipaddress.IPv6Network((int(addr) >> 64 << 64, 64))
    text = f"{addr}/64"
    if addr == net.network_address:
        assert "subnet-router anycast" in (interface_address6(text) or "")
    else:
        assert interface_address6(text) is None
        assert interface_address6(f"{addr}/63") and interface_address6(f"{addr}/65")


prefix6_values = st.one_of(
    odd_text, with_lengths(st.ip_addresses()),
    st.tuples(addresses6, st.integers(-2, 140)).map(
        lambda t: str(ipaddress.ip_network(f"{t[0]}/{t[1]}", strict=False))
        if 0 <= t[1] <= 128 else f"{t[0]}/{t[1]}"),
    mutated(["2001:db8:100::/56", "fd00:77::/48", "2001:db8::/32"]))


@FAST
@given(prefix6_values)
def test_prefix6_never_raises_and_what_it_takes_round_trips(value):
    reason = prefix6(value)
    check_reason(reason)
    if reason is not None:
        return
    assert clean(value) and "%" not in value and len(value) <= MAX_IP_TEXT
    net = ipaddress.ip_network(value)
    assert net.version == 6 and 32 <= net.prefixlen <= 64 and space6(net) is None
    assert prefix6(str(net)) is None and ipaddress.ip_network(str(net)) == net


@FAST
@given(st.integers(0, 2**128 - 1), st.integers(0, 128))
def test_every_global_or_ula_prefix_of_a_routed_length_is_taken(value, length):
    net = ipaddress.ip_network(f"{in_space(value)}/{length}", strict=False)
    reason = prefix6(str(net))
    if 32 <= length <= 64:
        assert reason is None
    else:
        assert reason and ("shorter" in reason or "longer" in reason)


def _target_text(addr: object, port: int | None) -> str:
    return str(addr) if port is None else f"[{addr}]:{port}"


target_values = st.one_of(
    odd_text,
    st.tuples(st.ip_addresses(), st.one_of(st.none(), st.integers(-1, 70000))).map(
        lambda t: _target_text(*t)),
    st.tuples(addresses6, st.one_of(st.none(), st.integers(1, 65535))).map(
        lambda t: _target_text(*t)),
    mutated(["[2001:db8:100:1::50]:8080", "2001:db8:100:1::50", "[fd00::1]:1"]))


@FAST
@given(target_values)
def test_an_ipv6_target_never_raises_and_what_it_takes_round_trips(value):
    reason = forward_target(value)
    check_reason(reason)
    parsed = parse_target(value)
    if reason is not None:
        assert parsed == reason
        return
    assert isinstance(parsed, tuple)
    addr, port = parsed
    assert "%" not in value and len(value) <= MAX_TARGET_TEXT and clean(value)
    ip = ipaddress.ip_address(addr)
    assert str(ip) == addr  # canonical: what the model holds
    if ip.version == 6:
        assert space6(ip) is None and ip not in ipaddress.IPv6Network("::ffff:0:0/96")
        assert value.startswith("[") == (port is not None)
        assert parse_target(_target_text(ip, port)) == (addr, port)  # round trip
    else:
        assert "[" not in value


@FAST
@given(st.integers(0, 2**128 - 1), st.one_of(st.none(), st.integers(1, 65535)))
def test_every_global_or_ula_target_is_taken(value, port):
    addr = in_space(value)
    assert parse_target(_target_text(addr, port)) == (str(addr), port)
    assert parse_target(_target_text(addr.exploded, port)) == (str(addr), port)
    assert forward_target(f"[{addr}]")  # brackets only with a port


@FAST
@given(st.ip_addresses(v=6), st.text(min_size=1, max_size=12),
       st.one_of(st.none(), st.integers(1, 65535)))
def test_a_zone_id_is_never_taken(addr, zone, port):
    for value in (f"{addr}%{zone}", f"{addr}%{zone}/64"):
        assert interface_address6(value if "/" in value else value + "/64")
        assert prefix6(value if "/" in value else value + "/56")
    assert forward_target(_target_text(f"{addr}%{zone}", port))
