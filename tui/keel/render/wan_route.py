"""The static WAN's default route. A gateway outside the WAN subnet (a VPS
handed a /32 with an on-link gateway) is reached `onlink`: the kernel takes
it as directly on the link instead of refusing it as unreachable."""

from __future__ import annotations

import ipaddress

from keel.model import Wan


def needs_onlink(address: str, gateway: str) -> bool:
    gw = ipaddress.ip_address(gateway)
    net = ipaddress.ip_interface(address).network
    return gw.version == net.version and gw not in net and not gw.is_link_local


def default_route_command(wan: Wan) -> list[str] | None:
    """`ip route replace default via GW dev WAN [onlink]`, or None (DHCP, or
    no gateway)."""
    if wan.dhcp or not wan.gateway:
        return None
    argv = ["ip"]
    if ipaddress.ip_address(wan.gateway).version == 6:
        argv.append("-6")
    argv += ["route", "replace", "default", "via", wan.gateway, "dev", wan.interface]
    if wan.address and needs_onlink(wan.address, wan.gateway):
        argv.append("onlink")
    return argv
