"""Questions about many IP networks at once, in O(n log n) or better, so a
hub of thousands of peers is checked in a blink: which network overlaps an
earlier one, and whether a set of networks covers a network or an address.

Two CIDR networks overlap only when one contains the other, so sorted by
(version, first address, prefix length) every network comes right after the
networks that contain it: a sweep with a stack of the open containers finds
every overlap."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field
from functools import lru_cache

Network = ipaddress.IPv4Network | ipaddress.IPv6Network
Address = ipaddress.IPv4Address | ipaddress.IPv6Address
NetKey = tuple[int, int, int]  # (version, first address, prefix length)
_NONE = 1 << 62  # "no position": larger than any


@lru_cache(maxsize=1 << 16)
def network(text: str) -> Network:
    """ipaddress.ip_network(text) (strict), parsed once: the schema check and
    every relation read the same allowed_ips. Raises ValueError."""
    return ipaddress.ip_network(text)


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
