"""Which peer a self-test runs against: from `wg show all dump`, the peer's
tunnel address (where its iperf3 server listens) and its public address."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass

from keel.parse.wgdump import WgInterface
from keel.selftest.events import SelfTestError


@dataclass(frozen=True)
class Peer:
    interface: str
    tunnel_ip: str  # inside the tunnel
    public_ip: str | None  # the endpoint's address, outside the tunnel


def _host_of(endpoint: str | None) -> str | None:
    if not endpoint:
        return None
    host = endpoint.rsplit(":", 1)[0]
    return host.strip("[]")


def find_peer(interfaces: dict[str, WgInterface], tunnel_ip: str | None = None) -> Peer:
    for wg in interfaces.values():
        for peer in wg.peers:
            for allowed in peer.allowed_ips:
                net = ipaddress.ip_network(allowed, strict=False)
                if tunnel_ip is not None:
                    if ipaddress.ip_address(tunnel_ip) in net:
                        return Peer(wg.name, tunnel_ip, _host_of(peer.endpoint))
                elif net.version == 4 and net.prefixlen == 32:
                    return Peer(wg.name, str(net.network_address), _host_of(peer.endpoint))
    if tunnel_ip is not None:
        raise SelfTestError(f"no WireGuard peer routes {tunnel_ip}")
    raise SelfTestError("no WireGuard peer with a /32 tunnel address: give --peer ADDRESS")
