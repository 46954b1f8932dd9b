"""The router's IPv6 state as `keel doctor` shows it: each interface's
global addresses with their lifetimes (`ip -6 -j addr show`: SLAAC's on
the WAN, the /64 dhcpcd put on a LAN from the delegation, keel's static
ones), the IPv6 default route, and whether keel's dhcpcd runs."""

from __future__ import annotations

import ipaddress
import json
from dataclasses import dataclass
from pathlib import Path

from keel.system.commands import Runner
from keel.system.processes import pid_alive, pidfile_pid

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


def read_addresses6(runner: Runner) -> dict[str, tuple[Address6, ...]]:
    proc = runner.run(["ip", "-6", "-j", "addr", "show"], check=False)
    if proc.returncode != 0:
        return {}
    try:
        return parse_addresses6(proc.stdout)
    except ValueError:
        return {}


def read_default6(runner: Runner) -> tuple[str, str] | None:
    """(gateway, device) of the main table's IPv6 default route, or None."""
    proc = runner.run(["ip", "-6", "-j", "route", "show", "default"], check=False)
    try:
        routes = json.loads(proc.stdout or "[]") if proc.returncode == 0 else []
    except ValueError:
        return None
    for route in routes if isinstance(routes, list) else []:
        if isinstance(route, dict):
            return str(route.get("gateway", "")), str(route.get("dev", ""))
    return None


def daemon_running(pidfile: Path) -> bool:
    pid = pidfile_pid(str(pidfile))
    return pid is not None and pid_alive(pid)
