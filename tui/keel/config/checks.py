"""Value checks named by the schema's Rule.syntax: each takes a string and
returns None when it is fine, else the reason. A reason never repeats the
value (it could be a key)."""

from __future__ import annotations

import base64
import binascii
import ipaddress
import re
from collections.abc import Callable

from keel.config.netsets import Address, Network, network
from keel.config.netsets import address as strict_address
from keel.config.netsets import interface as strict_interface
from keel.config.nic_spec import parse_spec
from keel.config.schema import Rule
from keel.parse.ssh_key import parse_public_key

IFNAMSIZ = 16  # the kernel's buffer, with the terminating NUL
_IFNAME_CHARS = re.compile(r"^[A-Za-z0-9_.@+-]+\Z")
_LABEL = re.compile(r"^(?!-)[A-Za-z0-9-]{1,63}(?<!-)\Z")
_LEASE = re.compile(r"([0-9]+)([smhdw]?)")
_LEASE_UNITS = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}
LEASE_MIN_S = 120  # dnsmasq's minimum
LEASE_MAX_S = 365 * 86400
WG_KEY_CHARS = 44
_ENDPOINT_V6 = re.compile(r"\[([^\]]*)\]:([0-9]{1,5})")
_ENDPOINT = re.compile(r"([^:\[\]]*):([0-9]{1,5})")
PORT_LOW, PORT_HIGH = 1, 65535
MAX_RANGE_PORTS = 1000  # ports in one forwarded range, like "8000-8999"
_DIGITS = re.compile(r"[0-9]+")  # ASCII only (\d takes any script's digits)
_NOT_PORTS = ('not a port or a range: a number like 8080, or a range like "8000-8010", '
              "in digits only (no space, no sign)")
_TARGET_IS = ("a target is an address, or address:port like 192.168.77.50:80 or "
              "[2001:db8:100:1::50]:80")
MAX_TARGET_TEXT = 64  # "[" + the longest IPv6 literal (45) + "]:65535", with room
LAN6_PREFIX = 64  # SLAAC's prefix length: a LAN is one /64
PREFIX6_LENGTHS = (32, 64)  # a routed prefix: from a /32 down to one /64
_GLOBAL_UNICAST = ipaddress.IPv6Network("2000::/3")
_UNIQUE_LOCAL = ipaddress.IPv6Network("fc00::/7")
_MAPPED = ipaddress.IPv6Network("::ffff:0:0/96")
# what lies outside 2000::/3 and fc00::/7, named (most specific first)
_SPACES6 = (
    (ipaddress.IPv6Network("::/128"), "the unspecified address (::)"),
    (ipaddress.IPv6Network("::1/128"), "the loopback address (::1)"),
    (_MAPPED, "IPv4-mapped (::ffff:0:0/96)"),
    (ipaddress.IPv6Network("fe80::/10"), "link-local (fe80::/10: every interface has one "
                                         "of its own, never routed)"),
    (ipaddress.IPv6Network("ff00::/8"), "multicast (ff00::/8)"),
)
_NOT_UNICAST6 = "not in global unicast (2000::/3) or unique local (fc00::/7) space"


def ifname(value: str) -> str | None:
    """Linux's dev_valid_name(): 1..IFNAMSIZ-1 bytes, not "." or "..", no '/',
    ':' or white space; keel also keeps to characters safe in tc/nft/ip."""
    bad = "not an interface name"
    if not value:
        return f"{bad}: empty"
    if len(value.encode()) > IFNAMSIZ - 1:
        return f"{bad}: longer than {IFNAMSIZ - 1} characters"
    if value in (".", ".."):
        return f"{bad}: '.' and '..' are not allowed"
    if any(ch in "/:" or ch.isspace() for ch in value):
        return f"{bad}: '/', ':' and white space are not allowed"
    if not _IFNAME_CHARS.match(value):
        return f"{bad}: use letters, digits and _ . @ + -"
    return None


def ifname_or_identity(value: str) -> str | None:
    """A NIC by its kernel name (ifname) or by what it is: mac:... or pci:...
    (keel.config.nic_spec)."""
    try:
        parse_spec(value, ifname)
    except ValueError as err:
        return str(err)
    return None


def hostname(value: str) -> str | None:
    return None if _LABEL.match(value) else (
        "not a host name (1-63 letters, digits and '-', not starting or ending with '-')")


def dns_name(value: str) -> str | None:
    if not value or len(value) > 253:
        return "not a host name"
    labels = value.removesuffix(".").split(".")
    if all(label.isdigit() for label in labels):
        return None if _is_ipv4(value) else "not an IPv4 address"
    return None if all(_LABEL.match(label) for label in labels) else "not a host name"


def _is_ipv4(value: str) -> bool:
    try:
        return strict_address(value).version == 4
    except ValueError:
        return False


def interface_address(value: str) -> str | None:
    """An address with its prefix length: 192.168.77.1/24 (strictly:
    keel.config.netsets.interface)."""
    try:
        iface = strict_interface(value)
    except ValueError as err:
        return str(err)
    net = iface.network
    if net.version == 4 and net.prefixlen < 31:
        if iface.ip == net.network_address:
            return "is the network's own address, not a host address"
        if iface.ip == net.broadcast_address:
            return "is the broadcast address, not a host address"
    return None


def address(value: str) -> str | None:
    """An address without a prefix (keel.config.netsets.address)."""
    try:
        strict_address(value)
    except ValueError as err:
        return str(err)
    return None


def prefix(value: str) -> str | None:
    """A prefix, host bits clear (keel.config.netsets.network)."""
    try:
        network(value)
    except ValueError as err:
        return str(err)
    return None


def space6(net: Network | Address) -> str | None:
    """The reason an IPv6 address or prefix is not one keel routes or gives a
    LAN: it must lie in global unicast (2000::/3) or unique local (fc00::/7)
    space; None when it does."""
    if isinstance(net, (ipaddress.IPv4Address, ipaddress.IPv6Address)):
        net = ipaddress.ip_network(net)
    if net.version != 6:
        return "not IPv6"
    if net.subnet_of(_GLOBAL_UNICAST) or net.subnet_of(_UNIQUE_LOCAL):  # type: ignore[arg-type]
        return None
    for space, name in _SPACES6:
        if net.subnet_of(space):  # type: ignore[arg-type]
            return f"{name}: {_NOT_UNICAST6}"
    return _NOT_UNICAST6


def interface_address6(value: str) -> str | None:
    """A LAN's IPv6 address with its prefix length, like 2001:db8:100:1::1/64:
    strictly (keel.config.netsets.interface: no zone id, no white space, at
    most MAX_IP_TEXT characters), IPv6, exactly /64 (SLAAC), in global
    unicast or unique local space, and not the /64's all-zero host (the
    subnet-router anycast address)."""
    try:
        iface = strict_interface(value)
    except ValueError as err:
        return str(err)
    if iface.version != 6:
        return ("an IPv4 address: give an IPv6 address with its /64, like "
                "2001:db8:100:1::1/64")
    length = iface.network.prefixlen
    if length > LAN6_PREFIX:
        return (f"/{length}: an IPv6 prefix longer than /64 for a LAN (SLAAC needs exactly "
                "/64)")
    if length < LAN6_PREFIX:
        return (f"/{length}: an IPv6 prefix shorter than /64 for a LAN (a LAN is one /64: "
                "SLAAC needs exactly /64)")
    why = space6(iface.ip)
    if why:
        return why
    if iface.ip == iface.network.network_address:
        return ("the /64's subnet-router anycast address (its host part all zeros), not a "
                "host address: like ...::1/64")
    return None


def prefix6(value: str) -> str | None:
    """An IPv6 network routed to this router, like 2001:db8:100::/56:
    strictly (keel.config.netsets.network: host bits clear, no zone id),
    /32 to /64, in global unicast or unique local space."""
    try:
        net = network(value)
    except ValueError as err:
        return str(err)
    if net.version != 6:
        return "an IPv4 prefix: give an IPv6 network, like 2001:db8:100::/56"
    low, high = PREFIX6_LENGTHS
    if net.prefixlen < low:
        return f"/{net.prefixlen}: shorter than /{low}"
    if net.prefixlen > high:
        return f"/{net.prefixlen}: longer than /{high} (an edge's LAN is a whole /64 of it)"
    return space6(net)


def wg_key(value: str) -> str | None:
    """A WireGuard key as `wg` writes it: 44 characters of base64 for 32 bytes,
    in canonical form (wg refuses keys whose unused bits are set)."""
    if len(value) != WG_KEY_CHARS:
        return (f"invalid key: {len(value)} characters, needs {WG_KEY_CHARS} "
                "(base64 of 32 bytes)")
    try:
        raw = base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        return "invalid key: not base64"
    if len(raw) != 32:
        return f"invalid key: {len(raw)} bytes, needs 32 (44 base64 characters ending in '=')"
    if base64.b64encode(raw).decode() != value:
        return "invalid key: not canonical base64 (unused bits set)"
    return None


def endpoint(value: str) -> str | None:
    """host:port, or [IPv6]:port; the address strictly (no zone id, no white
    space: keel.config.netsets.address), the port in ASCII digits."""
    if m := _ENDPOINT_V6.fullmatch(value):
        host_reason = None
        try:
            if strict_address(m[1]).version != 6:
                host_reason = ("not an IPv6 address inside [...] (an IPv4 address: write it "
                               "without brackets)")
        except ValueError as err:
            host_reason = f"not an IPv6 address inside [...]: {err}"
    elif m := _ENDPOINT.fullmatch(value):
        host_reason = dns_name(m[1])
    else:
        return "not host:port (or [IPv6]:port)"
    if host_reason:
        return host_reason
    return None if 1 <= int(m[2]) <= 65535 else "port outside 1-65535"


def lease(value: str) -> str | None:
    """A dnsmasq lease time: seconds, or a number with s, m, h, d or w;
    from dnsmasq's minimum of 2 minutes up to a year, or infinite."""
    if value == "infinite":
        return None
    m = _LEASE.fullmatch(value)
    if not m:
        return "not a lease time like 12h, 30m or infinite"
    digits = m[1].lstrip("0") or "0"
    if len(digits) > 12 or int(digits) * _LEASE_UNITS[m[2]] > LEASE_MAX_S:
        return "longer than a year (infinite: no end)"
    if int(digits) * _LEASE_UNITS[m[2]] < LEASE_MIN_S:
        return "shorter than 2 minutes (dnsmasq's minimum)"
    return None


def _port(text: str, not_digits: str) -> int | str:
    """A port written in ASCII digits, or the reason it is not one
    (`not_digits` when it is not a number at all)."""
    if not _DIGITS.fullmatch(text):
        return not_digits
    if len(text) > 1 and text.startswith("0"):
        return "a port is written without leading zeros"
    if len(text) > 5 or not PORT_LOW <= int(text) <= PORT_HIGH:
        return f"a port outside {PORT_LOW}-{PORT_HIGH}"
    return int(text)


def parse_ports(value: str | int) -> tuple[int, int] | str:
    """(low, high) of a forward's public port(s): 8080, "8080" or "8000-8010";
    else the reason. The one parse of `forward.port`: the check, the
    relations and the model all read it."""
    if isinstance(value, int):
        return (value, value) if PORT_LOW <= value <= PORT_HIGH else (
            f"outside {PORT_LOW}-{PORT_HIGH}")
    first, dash, last = value.partition("-")
    low = _port(first, _NOT_PORTS)
    high = _port(last, _NOT_PORTS) if dash else low
    if isinstance(low, str):
        return low
    if isinstance(high, str):
        return high
    if low > high:
        return "a range goes up: its first port is above its last"
    if high - low + 1 > MAX_RANGE_PORTS:
        return f"a range of {high - low + 1} ports (at most {MAX_RANGE_PORTS})"
    return low, high


def port_range(value: str | int) -> str | None:
    """A port (an integer, or ASCII digits in a string) or a range "N-M",
    1 <= N <= M <= 65535, at most MAX_RANGE_PORTS ports: nothing else."""
    parsed = parse_ports(value)
    return parsed if isinstance(parsed, str) else None


def _ipv6_target(text: str) -> ipaddress.IPv6Address | str:
    """The IPv6 address of a target (inside [...], or alone), or the reason."""
    try:
        addr = strict_address(text)
    except ValueError as err:
        return f"{err} ({_TARGET_IS})"
    if not isinstance(addr, ipaddress.IPv6Address):
        return "an IPv4 target is written without [...]"
    if addr in _MAPPED:
        return "an IPv4-mapped IPv6 address: write an IPv4 target as A.B.C.D"
    why = space6(addr)
    return why if why else addr


def _bracketed(value: str) -> tuple[str, int | None] | str:
    """"[IPv6]:PORT": the brackets are for an address with a port."""
    close = value.find("]")
    if close < 0:
        return f"a '[' without its ']' ({_TARGET_IS})"
    addr = _ipv6_target(value[1:close])
    if isinstance(addr, str):
        return addr
    rest = value[close + 1:]
    if not rest:
        return ("[...] is for an IPv6 address with a port: write the address alone, or "
                "[address]:port")
    if not rest.startswith(":"):
        return "after ']' comes ':' and the port"
    port = _port(rest[1:], "not a number (digits only: no space, no sign)")
    if isinstance(port, str):
        return f"the port after ']:': {port}"
    return str(addr), port


def parse_target(value: str) -> tuple[str, int | None] | str:
    """(address, port or None) of a forward's target: "A.B.C.D:PORT" or
    "A.B.C.D"; "[IPv6]:PORT" or the IPv6 address alone (brackets required
    with a port), global unicast or unique local; the address strictly
    (keel.config.netsets.address: no zone id, no white space), an IPv6 one
    in its canonical form (what the model holds); else the reason. The one
    parse of `forward.to`."""
    if len(value) > MAX_TARGET_TEXT:
        return f"longer than {MAX_TARGET_TEXT} characters ({_TARGET_IS})"
    if value.startswith("["):
        return _bracketed(value)
    if value.count(":") >= 2:  # an IPv6 address alone (with a port it needs [...])
        addr = _ipv6_target(value)
        return addr if isinstance(addr, str) else (str(addr), None)
    host, colon, port_text = value.partition(":")
    try:
        strict_address(host)  # IPv4: it holds no ':'
    except ValueError as err:
        return f"{err} ({_TARGET_IS})"
    if not colon:
        return host, None
    port = _port(port_text, "not a number (digits only: no space, no sign)")
    if isinstance(port, str):
        return f"the port after ':': {port}"
    return host, port


def forward_target(value: str) -> str | None:
    """A forward's target: an IPv4 address, alone or with ":port"; an IPv6
    address alone or as "[address]:port" (parse_target)."""
    parsed = parse_target(value)
    return parsed if isinstance(parsed, str) else None


def ssh_public_key(value: str) -> str | None:
    try:
        parse_public_key(value)
    except ValueError as err:
        return str(err)
    return None


SYNTAXES: dict[str, Callable[[str], str | None]] = {
    "ifname": ifname,
    "ifname_or_identity": ifname_or_identity,
    "hostname": hostname,
    "address": address,
    "prefix": prefix,
    "interface_address": interface_address,
    "interface_address6": interface_address6,
    "prefix6": prefix6,
    "wg_key": wg_key,
    "endpoint": endpoint,
    "lease": lease,
    "ssh_public_key": ssh_public_key,
    "port_range": port_range,
    "forward_target": forward_target,
}
# the syntaxes that judge an integer too (a key typed string or integer)
NUMERIC_SYNTAXES: dict[str, Callable[[int], str | None]] = {"port_range": port_range}


def _span(low: int, high: int) -> str:
    return f"{low}-{high}" if low >= 0 else f"{low}..{high}"


def by_rule(rule: Rule, value: str | int) -> str | None:
    """The reason a well-typed value breaks its rule, or None."""
    if isinstance(value, int):
        if rule.low is not None and rule.high is not None and not (
                rule.low <= value <= rule.high):
            unit = f" {rule.unit}" if rule.unit else ""
            return f"outside {_span(rule.low, rule.high)}{unit}"
        if rule.syntax in NUMERIC_SYNTAXES:
            return NUMERIC_SYNTAXES[rule.syntax](value)
        return None
    if rule.choices and value not in rule.choices:
        if rule.low is not None and rule.high is not None:
            return (f"must be a number of bytes ({_span(rule.low, rule.high)}) or one of: "
                    + ", ".join(rule.choices))
        return "must be one of: " + ", ".join(rule.choices)
    if rule.syntax:
        return SYNTAXES[rule.syntax](value)
    return None
