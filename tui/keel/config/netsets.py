"""Questions about many IP networks at once, in O(n log n) or better, so a
hub of thousands of peers is checked in a blink: which network overlaps an
earlier one, and whether a set of networks covers a network or an address.

Two CIDR networks overlap only when one contains the other, so sorted by
(version, first address, prefix length) every network comes right after the
networks that contain it: a sweep with a stack of the open containers finds
every overlap.

The strict parse of every address and prefix keel takes (the config's keys,
pairing's messages) is here too: `address`, `interface` and `network` take
only the characters of an IP literal and a decimal prefix length. Python's
ipaddress alone takes an IPv6 zone id ("fe80::1%eth0"), with anything after
the '%', newlines included, and a netmask after the '/'; such text would
reach `ip`, `wg` and the WireGuard config as it was written."""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass, field
from functools import lru_cache

from keel.shown import shown

Network = ipaddress.IPv4Network | ipaddress.IPv6Network
Address = ipaddress.IPv4Address | ipaddress.IPv6Address
Interface = ipaddress.IPv4Interface | ipaddress.IPv6Interface
NetKey = tuple[int, int, int]  # (version, first address, prefix length)
_NONE = 1 << 62  # "no position": larger than any

MAX_IP_TEXT = 49  # "ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255/128"
_IP_CHARS = re.compile(r"[0-9A-Fa-f:.]+")
_PREFIX_LENGTH = re.compile(r"0|[1-9][0-9]{0,2}")
_NO_LENGTH = "needs a prefix length, like 192.168.77.0/24"


class IpTextError(ValueError):
    """An address or prefix keel does not take; the message says why and
    never repeats the text (it names one character at most, escaped)."""


def check_ip_text(text: str, with_prefix: bool) -> None:
    """The one character check of an IP literal, before ipaddress sees it:
    hex digits, ':' and '.', then (with_prefix) '/' and a decimal length.
    No zone id, no white space, no control or non-ASCII character.
    Raises IpTextError."""
    what = "an IP prefix" if with_prefix else "an IP address"
    why = _odd_ip_text(text, with_prefix)
    if why:
        raise IpTextError(f"not {what}: {why}")


def _odd_ip_text(text: str, with_prefix: bool) -> str | None:
    if not isinstance(text, str) or not text:
        return "empty"
    if len(text) > MAX_IP_TEXT:
        return f"longer than {MAX_IP_TEXT} characters"
    if "%" in text:
        return "an IPv6 zone id ('%' and an interface) is not allowed"
    for at, ch in enumerate(text, 1):
        if ch == " ":
            return f"a space at character {at}"
        if ch.isspace() or not ch.isprintable():
            return f"white space or a control character ({shown(ch)}) at character {at}"
        if not (_IP_CHARS.fullmatch(ch) or ch == "/"):
            return f"a character that is not part of one ({shown(ch)}) at character {at}"
    host, slash, length = text.partition("/")
    if slash and not with_prefix:
        return "a '/': give the address alone, without a prefix length"
    if with_prefix and not slash:
        return _NO_LENGTH
    if not _IP_CHARS.fullmatch(host):
        return "no address before the '/'"
    if slash and not _PREFIX_LENGTH.fullmatch(length):
        return "the prefix length must be a number like /24 (not a netmask, no leading zeros)"
    return None


def address(text: str) -> Address:
    """An IPv4 or IPv6 address, strictly: no prefix, no zone id. Raises ValueError."""
    check_ip_text(text, with_prefix=False)
    try:
        return ipaddress.ip_address(text)
    except ValueError:
        raise IpTextError("not an IP address") from None


def interface(text: str) -> Interface:
    """An address with its prefix length (192.168.77.1/24), strictly.
    Raises ValueError."""
    why = _odd_ip_text(text, with_prefix=True)
    if why == _NO_LENGTH:
        raise IpTextError("needs a prefix length, like 192.168.77.1/24")
    if why:
        raise IpTextError(f"not an address with a prefix length: {why}")
    try:
        return ipaddress.ip_interface(text)
    except ValueError:
        raise IpTextError("not an address with a prefix length") from None


@lru_cache(maxsize=1 << 16)
def network(text: str) -> Network:
    """A prefix (10.0.0.0/24), strictly: no host bits set, no zone id,
    parsed once: the schema check and every relation read the same
    allowed_ips. Raises ValueError (IpTextError)."""
    check_ip_text(text, with_prefix=True)
    try:
        return ipaddress.ip_network(text)
    except ValueError as err:
        if "host bits" in str(err):
            raise IpTextError("host bits set in a prefix") from None
        raise IpTextError("not an IP prefix") from None


def key(net: Network) -> NetKey:
    return net.version, int(net.network_address), net.prefixlen


def _bits(version: int) -> int:
    return 32 if version == 4 else 128


@dataclass
class _Open:
    """A network on the sweep's stack: its position in the input, the end
    of its range, the earliest position among it and its containers, and
    the earliest among what it contains."""

    position: int
    version: int
    last: int
    chain_min: int
    inner_min: int = field(default=_NONE)


def earliest_overlaps(nets: list[Network]) -> dict[int, int]:
    """For each position whose network overlaps one at an earlier position:
    the earliest such position."""
    order = sorted(range(len(nets)), key=lambda i: (*key(nets[i]), i))
    found: dict[int, int] = {}
    stack: list[_Open] = []

    def close() -> None:
        done = stack.pop()
        earliest = min(done.inner_min, stack[-1].chain_min if stack else _NONE)
        if earliest < done.position:
            found[done.position] = earliest
        if stack:
            parent = stack[-1]
            parent.inner_min = min(parent.inner_min, done.position, done.inner_min)

    for i in order:
        net = nets[i]
        first = int(net.network_address)
        while stack and (stack[-1].version != net.version or stack[-1].last < first):
            close()
        chain = min(stack[-1].chain_min, i) if stack else i
        stack.append(_Open(i, net.version, int(net.broadcast_address), chain))
    while stack:
        close()
    return found


class NetSet:
    """Networks, looked up by every prefix that could contain a network or
    an address: at most 33 (IPv4) or 129 (IPv6) lookups."""

    def __init__(self, nets: list[Network] | None = None) -> None:
        self._first: dict[NetKey, int] = {}
        for i, net in enumerate(nets or []):
            self._first.setdefault(key(net), i)

    def containers(self, net: Network | Address) -> list[int]:
        """The positions of the networks that hold `net` (equal or larger),
        most specific first; the first position of each distinct network."""
        if isinstance(net, (ipaddress.IPv4Address, ipaddress.IPv6Address)):
            version, value, length = net.version, int(net), _bits(net.version)
        else:
            version, value, length = key(net)
        bits = _bits(version)
        found = []
        for plen in range(length, -1, -1):
            mask = ((1 << bits) - 1) ^ ((1 << (bits - plen)) - 1)
            hit = self._first.get((version, value & mask, plen))
            if hit is not None:
                found.append(hit)
        return found

    def container(self, net: Network | Address) -> int | None:
        """The position of the most specific network that holds `net`, or None."""
        found = self.containers(net)
        return found[0] if found else None
