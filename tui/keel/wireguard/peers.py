"""Which peer: the one chooser of the WireGuard peer the dashboard probes and
the self-tests load. The first peer (interfaces by name, peers as `wg` lists
them) with a single-address allowed IP (/32 or /128) is the other router; or
the peer whose allowed IPs route a given tunnel address."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass

from keel.parse.wgdump import WgInterface


class NoPeer(LookupError):
    """No peer fits: one line saying why."""


@dataclass(frozen=True)
class TunnelPeer:
    interface: str
    tunnel_ip: str  # the peer's address inside the tunnel
    public_ip: str | None  # its endpoint's address, outside the tunnel


def endpoint_host(endpoint: str | None) -> str | None:
    """The address of `host:port` or `[v6]:port`."""
    if not endpoint:
        return None
    return endpoint.rsplit(":", 1)[0].strip("[]")


def choose_peer(interfaces: dict[str, WgInterface], tunnel_ip: str | None = None) -> TunnelPeer:
    for name in sorted(interfaces):
        wg = interfaces[name]
        for peer in wg.peers:
            for allowed in peer.allowed_ips:
                net = ipaddress.ip_network(allowed, strict=False)
                if tunnel_ip is not None:
                    if ipaddress.ip_address(tunnel_ip) in net:
                        return TunnelPeer(wg.name, tunnel_ip, endpoint_host(peer.endpoint))
                elif net.num_addresses == 1:
                    return TunnelPeer(wg.name, str(net.network_address),
                                      endpoint_host(peer.endpoint))
    if tunnel_ip is not None:
        raise NoPeer(f"no WireGuard peer routes {tunnel_ip}")
    raise NoPeer("no WireGuard peer with a single-address allowed IP (/32 or /128): "
                 "give --peer ADDRESS")
