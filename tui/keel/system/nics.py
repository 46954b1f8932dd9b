"""The NICs to set the router up on: `ip -j -d addr show` (name, MAC, link
state, addresses) and each one's driver from sysfs (the device's uevent)."""

from __future__ import annotations

import dataclasses
import json

from keel.parse.ipaddr import Nic, parse_ip_addr, uevent_driver
from keel.system.source import RealSource, Source, SourceError

IP_ADDR = ("ip", "-j", "-d", "addr", "show")
NET = "/sys/class/net"


def read_driver(name: str, source: Source | None = None) -> str:
    """The NIC's driver; "" for a virtual link (no device) or when unreadable."""
    try:
        return uevent_driver((source or RealSource()).read_text(f"{NET}/{name}/device/uevent"))
    except SourceError:
        return ""


def read_nics(source: Source | None = None) -> list[Nic]:
    """The NICs with their drivers; SourceError when ip fails or prints
    what is not its JSON."""
    source = source or RealSource()
    text = source.run(IP_ADDR)
    try:
        nics = parse_ip_addr(json.loads(text) if text.strip() else [])
    except (ValueError, TypeError, KeyError, AttributeError) as err:
        raise SourceError(f"ip addr show: not what ip prints: {err}") from None
    return [dataclasses.replace(nic, driver=read_driver(nic.name, source)) for nic in nics]
