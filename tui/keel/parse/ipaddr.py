"""`ip -j -d addr show`: the NICs with their MAC, link state and addresses
(the setup wizard's list to pick the WAN and the LAN from); the driver from
a device's uevent (`DRIVER=virtio_net`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

# kinds of link that are keel's own or not a way out: never a WAN or a LAN
NOT_A_NIC = ("ifb", "wireguard", "dummy", "veth")


@dataclass(frozen=True)
class Nic:
    name: str
    mac: str
    state: str  # "up" (carrier), "no carrier", "down" (not set up), or ip's operstate
    addresses: tuple[str, ...]  # "192.0.2.2/24", global and site scope, in ip's order
    kind: str = ""  # ip's info_kind: "" for a NIC, "bridge", "vlan", ...
    driver: str = ""  # "virtio_net", "e1000e"; "" when it has no device

    @property
    def ipv4(self) -> tuple[str, ...]:
        return tuple(a for a in self.addresses if ":" not in a)


def link_state(entry: dict[str, Any]) -> str:
    flags = entry.get("flags") or []
    if "UP" not in flags:
        return "down"
    if "NO-CARRIER" in flags:
        return "no carrier"
    if "LOWER_UP" in flags:
        return "up"
    return str(entry.get("operstate", "unknown")).lower()


def parse_ip_addr(data: list[dict[str, Any]]) -> list[Nic]:
    """Every Ethernet-like link that could be a WAN or a LAN (not the
    loopback, not WireGuard, not keel's ifb4* devices), in ip's order."""
    nics = []
    for entry in data:
        kind = str((entry.get("linkinfo") or {}).get("info_kind", ""))
        if entry.get("link_type") != "ether" or kind in NOT_A_NIC:
            continue
        addresses = tuple(f"{a['local']}/{a['prefixlen']}" for a in entry.get("addr_info") or []
                          if a.get("scope") in ("global", "site") and "local" in a)
        nics.append(Nic(str(entry["ifname"]), str(entry.get("address", "")), link_state(entry),
                        addresses, kind))
    return nics


def uevent_driver(text: str) -> str:
    """DRIVER= of a device's uevent; "" when it names none."""
    for line in text.splitlines():
        if line.startswith("DRIVER="):
            return line.partition("=")[2].strip()
    return ""
