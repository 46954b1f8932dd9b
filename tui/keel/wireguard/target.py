"""The peer the dashboard probes and the self-tests load, from the running
system: the tunnels (`wg show all dump`), their own networks, whether the
WAN has IPv6; chosen by keel.wireguard.peers (the one chooser)."""

from __future__ import annotations

from keel.system.ipv6 import read_wan_ipv6
from keel.system.source import RealSource, Source
from keel.system.wireguard import read_tunnel_networks, read_wireguard
from keel.wireguard.peers import TunnelPeer, choose_peer, tunnel_address


def read_probe_peer(source: Source | None = None, tunnel_ip: str | None = None) -> TunnelPeer:
    """The chosen peer; SourceError when there is no tunnel (wg fails),
    NoPeer when no peer fits."""
    if tunnel_ip is not None:
        tunnel_address(tunnel_ip)  # a typo is named before the tunnel is read
    source = source or RealSource()
    interfaces = read_wireguard(source)
    return choose_peer(interfaces, tunnel_ip, own=read_tunnel_networks(interfaces, source),
                       wan_ipv6=read_wan_ipv6(source, interfaces))
