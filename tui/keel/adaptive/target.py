"""Whom adaptive CAKE probes, and from where: the one rule the loader
(keel.config.relations: refuse a config it cannot run) and `keel apply`
(keel.apply.engine: the daemon's command line) both read. Pure.

The probes are IPv4 (keel.adaptive.wire, keel.adaptive.reflector): the
peer probed is the first peer with an endpoint (the hub an edge reaches)
that has a single IPv4 address (a /32) in its allowed_ips, its reflector's
tunnel address; the probes leave from this router's first IPv4 tunnel
address, on the tunnel device only."""

from __future__ import annotations

import ipaddress
from collections.abc import Sequence
from typing import Protocol


class PeerLike(Protocol):
    """A peer as the schema and the model both hold it."""

    @property
    def endpoint(self) -> str | None: ...

    @property
    def allowed_ips(self) -> tuple[str, ...]: ...


def probed_peer(peers: Sequence[PeerLike]) -> str | None:
    """The tunnel address of the peer whose reflector is probed, or None
    (no peer with an endpoint has a /32 in its allowed_ips)."""
    for peer in peers:
        if not peer.endpoint:
            continue
        for text in peer.allowed_ips:
            net = ipaddress.ip_network(text, strict=False)
            if net.version == 4 and net.num_addresses == 1:
                return str(net.network_address)
    return None


def probe_source(addresses: Sequence[str]) -> str | None:
    """This router's address the probes leave from: the first IPv4 one of
    the tunnel's interface addresses ("10.77.0.2/24"), or None."""
    for text in addresses:
        iface = ipaddress.ip_interface(text)
        if iface.version == 4:
            return str(iface.ip)
    return None
