"""The router's IPv6 state as `keel doctor` shows it: each interface's
global addresses with their lifetimes (`ip -6 -j addr show`: SLAAC's on
the WAN, the /64 dhcpcd put on a LAN from the delegation, keel's static
ones), the IPv6 default route, and whether keel's dhcpcd runs; and from
the same facts whether the WAN has IPv6 (the probes outside the tunnel
reach an IPv6 endpoint only then: keel.wireguard.peers.outside_target)."""

from __future__ import annotations

import ipaddress
import json
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from keel.system.commands import Runner
from keel.system.processes import pid_alive, pidfile_pid
from keel.system.source import RunnerSource, Source, SourceError

ADDR6 = ("ip", "-6", "-j", "addr", "show")
DEFAULT6 = ("ip", "-6", "-j", "route", "show", "default")

FOREVER = 0xFFFFFFFF
MAX_ENTRIES = 4096  # interfaces, and addresses on one


@dataclass(frozen=True)
class Address6:
    address: str  # "2001:db8::1/64"
    valid_s: int  # FOREVER: a static address (keel's)
    preferred_s: int

    @property
    def static(self) -> bool:
        return self.valid_s == FOREVER


def parse_addresses6(text: str) -> dict[str, tuple[Address6, ...]]:
    """`ip -6 -j addr show` -> {interface: its global IPv6 addresses};
    ValueError on what is not that listing."""
    data = json.loads(text or "[]")
    if not isinstance(data, list) or len(data) > MAX_ENTRIES:
        raise ValueError("not a list of interfaces")
    out: dict[str, tuple[Address6, ...]] = {}
    for entry in data:
        if not isinstance(entry, dict) or not isinstance(entry.get("ifname"), str):
            raise ValueError("an interface without a name")
        infos = entry.get("addr_info") or []
        if not isinstance(infos, list) or len(infos) > MAX_ENTRIES:
            raise ValueError("addr_info is not a list")
        found = []
        for a in infos:
            if not isinstance(a, dict) or a.get("scope") != "global" or "local" not in a:
                continue
            length = a.get("prefixlen", 128)
            if isinstance(length, bool) or not isinstance(length, int) or not 0 <= length <= 128:
                raise ValueError(f"a prefix length that is not 0..128: {length!r}")
            if not isinstance(a["local"], str):
                raise ValueError("an address that is not text")
            iface = ipaddress.IPv6Interface(f"{a['local']}/{length}")
            found.append(Address6(str(iface), _lifetime(a.get("valid_life_time")),
                                  _lifetime(a.get("preferred_life_time"))))
        out[entry["ifname"]] = tuple(found)
    return out


def _lifetime(value: object) -> int:
    if value is None:
        return FOREVER
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= FOREVER:
        raise ValueError(f"a lifetime that is not a number of seconds: {value!r}")
    return value


def addresses6(source: Source) -> dict[str, tuple[Address6, ...]]:
    """Each interface's global IPv6 addresses; {} when ip fails or prints
    what is not its listing."""
    try:
        return parse_addresses6(source.run(ADDR6))
    except (SourceError, ValueError):
        return {}


def read_addresses6(runner: Runner) -> dict[str, tuple[Address6, ...]]:
    return addresses6(RunnerSource(runner))


def parse_default6(text: str) -> tuple[str, str] | None:
    """`ip -6 -j route show default` (the main table) -> (gateway, device)
    of its first default route that carries traffic (a multipath route: its
    first next hop; an unreachable, blackhole or prohibit route is none), or
    None; ValueError on what is not that listing."""
    routes = json.loads(text or "[]")
    if not isinstance(routes, list) or len(routes) > MAX_ENTRIES:
        raise ValueError("not a list of routes")
    for route in routes:
        if not isinstance(route, dict):
            raise ValueError("a route that is not an object")
        if route.get("type", "unicast") != "unicast":
            continue
        hops = route.get("nexthops")
        if hops is not None:
            if not isinstance(hops, list) or len(hops) > MAX_ENTRIES:
                raise ValueError("nexthops is not a list")
            route = next((h for h in hops if isinstance(h, dict) and h.get("dev")), None)
            if route is None:
                continue
        gateway, dev = route.get("gateway", ""), route.get("dev")
        if not isinstance(gateway, str) or not isinstance(dev, str) or not dev:
            raise ValueError("a default route without a device")
        return gateway, dev
    return None


def default6(source: Source) -> tuple[str, str] | None:
    """(gateway, device) of the main table's IPv6 default route, or None
    (none, or ip failed)."""
    try:
        return parse_default6(source.run(DEFAULT6))
    except (SourceError, ValueError):
        return None


def read_default6(runner: Runner) -> tuple[str, str] | None:
    """(gateway, device) of the main table's IPv6 default route, or None."""
    return default6(RunnerSource(runner))


def wan_has_ipv6(addresses: Mapping[str, Sequence[Address6]], default: tuple[str, str] | None,
                 tunnels: Collection[str] = ()) -> bool:
    """Whether the router reaches the internet over IPv6 outside its tunnels:
    an IPv6 default route in the main table, not into a tunnel, and a global
    address to send from: on that route's device (SLAAC's, or a static WAN
    address), or one the provider gave elsewhere (with a lifetime: the /64
    dhcpcd put on a LAN from the delegation, when the WAN itself has none).
    A static address elsewhere does not count: a LAN's address6 may be the
    hub's prefix, which leaves only through the tunnel."""
    if default is None or default[1] in tunnels:
        return False
    if addresses.get(default[1]):
        return True
    return any(not a.static for name, found in addresses.items() if name not in tunnels
               for a in found)


def read_wan_ipv6(source: Source, tunnels: Collection[str] = ()) -> bool:
    """wan_has_ipv6 of the running system (False when ip cannot tell)."""
    return wan_has_ipv6(addresses6(source), default6(source), tunnels)


def daemon_running(pidfile: Path) -> bool:
    pid = pidfile_pid(str(pidfile))
    return pid is not None and pid_alive(pid)
