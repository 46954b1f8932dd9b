"""IPv6 by pairing: a hub with a routed prefix ([ipv6] routed_prefix) hands
each edge that has a LAN one /64 of it. The /64 goes in the edge's peer
`allowed_ips` on the hub (so the hub routes it into the tunnel), and the edge
puts it on its LAN (lan.address6, the router being ::1) and sends all IPv6
from it through the tunnel (::/0 in the hub peer's allowed_ips; the edge's
own routing sends only that /64's traffic there, by source).

Pure functions: which /64 an edge gets, which of a peer's allowed IPs is its
/64, and the edge's check of what the hub handed out."""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from ipaddress import IPv6Network

from keel.config.schema import Config, Peer
from keel.pair.errors import PairRefused

LAN_PREFIXLEN = 64  # SLAAC needs a /64
EVERYTHING = "::/0"
# the first /64 of the routed prefix stays the hub's own (its LAN, if it has
# one): edges get the second one on
FIRST_HANDED = 1
# how many /64s the hub looks through for a free one (a /48 has 65536)
MOST_TRIED = 4096


def routed_prefix(config: Config) -> IPv6Network | None:
    text = config.ipv6.routed_prefix
    return ipaddress.IPv6Network(text) if text else None


def peer_lan6(peer: Peer, routed: IPv6Network) -> IPv6Network | None:
    """The /64 of `routed` this peer was handed (None: none)."""
    for text in peer.allowed_ips:
        net = ipaddress.ip_network(text)
        if isinstance(net, IPv6Network) and net.prefixlen == LAN_PREFIXLEN \
                and net.subnet_of(routed):
            return net
    return None


def in_routed(text: str, routed: IPv6Network | None) -> bool:
    """`text` (a prefix) lies inside the hub's routed prefix."""
    if routed is None:
        return False
    net = ipaddress.ip_network(text)
    return isinstance(net, IPv6Network) and net.subnet_of(routed)


def hub_own_lan6(config: Config) -> IPv6Network | None:
    if config.lan is None or not config.lan.address6:
        return None
    return ipaddress.IPv6Interface(config.lan.address6).network


def free_lan6(config: Config, keep_key: str | None = None) -> IPv6Network:
    """The /64 the edge with public key `keep_key` gets: the one it holds
    already (pairing again), else the first /64 of the routed prefix (after
    the hub's own) that no other peer holds and the hub's LAN is not.
    Raises PairRefused when the prefix has none left."""
    routed = routed_prefix(config)
    assert routed is not None
    peers = config.wireguard.peer
    mine = next((p for p in peers if p.public_key == keep_key), None)
    if mine is not None and (held := peer_lan6(mine, routed)) is not None:
        return held
    taken = {net for p in peers if (net := peer_lan6(p, routed)) is not None}
    if (own := hub_own_lan6(config)) is not None:
        taken.add(own)
    count = 1 << (LAN_PREFIXLEN - routed.prefixlen)
    for index in range(FIRST_HANDED, min(count, FIRST_HANDED + MOST_TRIED)):
        net = IPv6Network((int(routed.network_address) + (index << (128 - LAN_PREFIXLEN)),
                           LAN_PREFIXLEN))
        if net not in taken:
            return net
    raise PairRefused(f"no /64 of the routed prefix {routed} is free for another edge: "
                      "remove a peer that is gone (keel peers remove NAME)")


def edge_lan6(text: str) -> tuple[IPv6Network, str]:
    """The /64 a grant hands out, checked (a global unicast or ULA /64), and
    the LAN address the edge takes in it (::1). Raises PairRefused."""
    try:
        net = ipaddress.IPv6Network(text)
    except ValueError as e:
        raise PairRefused(f"the hub's grant hands out {text!r}: not an IPv6 prefix ({e})") \
            from None
    if net.prefixlen != LAN_PREFIXLEN:
        raise PairRefused(f"the hub's grant hands out {net}: a LAN's IPv6 prefix is a /64")
    addr = net.network_address
    if not (addr in ipaddress.IPv6Network("2000::/3") or addr in ipaddress.IPv6Network("fc00::/7")):
        raise PairRefused(f"the hub's grant hands out {net}: neither global unicast "
                          "(2000::/3) nor ULA (fc00::/7)")
    return net, f"{net.network_address + 1}/{LAN_PREFIXLEN}"


def with_everything(allowed: Iterable[str]) -> tuple[str, ...]:
    """A hub peer's allowed IPs with ::/0 (every IPv6 destination) added once."""
    allowed = tuple(allowed)
    return allowed if EVERYTHING in allowed else (*allowed, EVERYTHING)
