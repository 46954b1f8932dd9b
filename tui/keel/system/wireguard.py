"""WireGuard in force: `wg show all dump`, the one reader (private keys are
dropped by the parser, never kept); and the tunnels' own networks (their
addresses, `ip -j addr show`), which say which of a peer's allowed IPs is
its tunnel address (keel.wireguard.peers)."""

from __future__ import annotations

import ipaddress
import json
from collections.abc import Collection

from keel.parse.wgdump import WgInterface, parse_wg_dump
from keel.system.source import RealSource, Source, SourceError

WG_DUMP = ("wg", "show", "all", "dump")
IP_ADDR = ("ip", "-j", "addr", "show")
MAX_ENTRIES = 4096  # interfaces, and addresses on one

Network = ipaddress.IPv4Network | ipaddress.IPv6Network


def read_wireguard(source: Source | None = None) -> dict[str, WgInterface]:
    """Interfaces by name; SourceError when wg fails or prints nonsense."""
    text = (source or RealSource()).run(WG_DUMP)
    try:
        return parse_wg_dump(text)
    except (ValueError, IndexError) as err:
        raise SourceError(f"wg show all dump: {err}") from None


def parse_networks(text: str, names: Collection[str]) -> dict[str, tuple[Network, ...]]:
    """`ip -j addr show` -> {interface in `names`: the networks of its
    addresses of global or site scope (IPv4 and IPv6), in ip's order};
    ValueError, saying what, on what is not that listing."""
    data = json.loads(text or "[]")
    if not isinstance(data, list) or len(data) > MAX_ENTRIES:
        raise ValueError("not a list of interfaces")
    out: dict[str, tuple[Network, ...]] = {}
    for entry in data:
        if entry == {}:  # what ip prints for an interface a filter left out
            continue
        if not isinstance(entry, dict) or not isinstance(entry.get("ifname"), str):
            raise ValueError("an interface without a name")
        if entry["ifname"] not in names:
            continue
        infos = entry.get("addr_info", [])
        if not isinstance(infos, list) or len(infos) > MAX_ENTRIES:
            raise ValueError(f"{entry['ifname']}: addr_info is not a list")
        found: list[Network] = []
        for a in infos:
            if not isinstance(a, dict):
                raise ValueError(f"{entry['ifname']}: an address that is not an object")
            if a.get("scope") not in ("global", "site") or a.get("family") not in ("inet",
                                                                                  "inet6"):
                continue
            local, length = a.get("local"), a.get("prefixlen")
            if not isinstance(local, str) or isinstance(length, bool) \
                    or not isinstance(length, int):
                raise ValueError(f"{entry['ifname']}: an address without local and prefixlen")
            if "%" in local or "/" in local:
                raise ValueError(f"{entry['ifname']}: not an address: {local!r}")
            iface = ipaddress.ip_interface(f"{local}/{length}")  # ValueError when wrong
            if (iface.version == 6) != (a["family"] == "inet6"):
                raise ValueError(f"{entry['ifname']}: {local} is not of family {a['family']}")
            found.append(iface.network)
        out[entry["ifname"]] = tuple(found)
    return out


def read_tunnel_networks(names: Collection[str], source: Source | None = None
                         ) -> dict[str, tuple[Network, ...]] | None:
    """The networks of the named tunnels' addresses; None when ip cannot
    tell (the chooser then takes any single-address allowed IP)."""
    try:
        return parse_networks((source or RealSource()).run(IP_ADDR), names)
    except (SourceError, ValueError):
        return None
