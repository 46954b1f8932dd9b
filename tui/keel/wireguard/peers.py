"""Which peer: the one chooser of the WireGuard peer the dashboard probes and
the self-tests load, and of the addresses they reach it at.

Its tunnel address: the first peer (interfaces by name, peers as `wg` lists
them) with a single-address allowed IP (/32 or /128) inside its tunnel's own
networks (the interface's addresses: a /128 of a hub's routed IPv6 prefix,
which ndp_proxy lets a peer hold, is an edge's LAN, not its tunnel address);
when the tunnel's addresses are not known, or it has none, any single address
(IPv4 or IPv6) is. Or the peer whose allowed IPs route a given address.

Its address outside the tunnel (outside_target): its endpoint, the address
WireGuard sends the tunnel to, so that the probe outside measures the path
the tunnel takes; an IPv6 endpoint only when the WAN has IPv6
(keel.system.ipv6.wan_has_ipv6), else none. The probes outside carry the
tunnel's fwmark (keel.system.ping) so that they leave by the WAN as
WireGuard's own packets do."""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from keel.parse.wgdump import WgInterface

Network = ipaddress.IPv4Network | ipaddress.IPv6Network


class NoPeer(LookupError):
    """No peer fits: one line saying why."""


@dataclass(frozen=True)
class TunnelPeer:
    interface: str
    tunnel_ip: str  # the peer's address inside the tunnel
    public_ip: str | None  # where to probe it outside the tunnel (outside_target)
    fwmark: int | None = None  # the tunnel's fwmark: a probe outside carries it


def endpoint_host(endpoint: str | None) -> str | None:
    """The address of `host:port` or `[v6]:port`."""
    if not endpoint:
        return None
    return endpoint.rsplit(":", 1)[0].strip("[]")


def outside_target(endpoint: str | None, wan_ipv6: bool) -> str | None:
    """The address to probe the peer at outside the tunnel: its endpoint's
    (an IPv4-mapped IPv6 address as IPv4); an IPv6 one only when the WAN has
    IPv6 (`wan_ipv6`) or it is on a link of ours (link-local); None when
    there is no endpoint or it cannot be reached."""
    host = endpoint_host(endpoint)
    if host is None:
        return None
    try:
        addr = ipaddress.ip_address(host)
    except ValueError:
        return None
    if isinstance(addr, ipaddress.IPv6Address):
        if addr.ipv4_mapped is not None:
            return str(addr.ipv4_mapped)
        if not (wan_ipv6 or addr.is_link_local):
            return None
    return str(addr)


def tunnel_address(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address:
    """A given tunnel address (`keel selftest --peer`); NoPeer naming it
    when it is not an IP address."""
    try:
        return ipaddress.ip_address(text)
    except ValueError:
        raise NoPeer(f"{text!r} is not an IP address (give the peer's tunnel address, "
                     "like 10.77.0.2 or fd00:77::2)") from None


def _single(allowed: Sequence[str], own: Sequence[Network] | None) -> str | None:
    """The first single-address allowed IP inside `own` (when it names any)."""
    hosts = []
    for text in allowed:
        try:
            net = ipaddress.ip_network(text, strict=False)
        except ValueError:
            continue
        if net.num_addresses == 1:
            hosts.append(net.network_address)
    inside = [h for h in hosts
              if any(h.version == n.version and h in n for n in own or ())]
    pick = inside[0] if inside else (hosts[0] if hosts and not own else None)
    return None if pick is None else str(pick)


def choose_peer(interfaces: Mapping[str, WgInterface], tunnel_ip: str | None = None, *,
                wan_ipv6: bool, own: Mapping[str, Sequence[Network]] | None = None
                ) -> TunnelPeer:
    """The peer to probe and load (the module's doc says which). `own`: each
    tunnel interface's networks (its addresses), None when not known;
    `wan_ipv6`: whether the WAN has IPv6 (outside_target)."""
    want = tunnel_address(tunnel_ip) if tunnel_ip is not None else None
    for name in sorted(interfaces):
        wg = interfaces[name]
        for peer in wg.peers:
            outside = outside_target(peer.endpoint, wan_ipv6)
            if want is not None:
                for allowed in peer.allowed_ips:
                    try:
                        net = ipaddress.ip_network(allowed, strict=False)
                    except ValueError:
                        continue
                    if net.version == want.version and want in net:
                        return TunnelPeer(wg.name, str(want), outside, wg.fwmark)
                continue
            host = _single(peer.allowed_ips, None if own is None else own.get(wg.name, ()))
            if host is not None:
                return TunnelPeer(wg.name, host, outside, wg.fwmark)
    if want is not None:
        raise NoPeer(f"no WireGuard peer routes {want}")
    raise NoPeer("no WireGuard peer with a single-address allowed IP (/32 or /128) in its "
                 "tunnel's networks: give --peer ADDRESS")
