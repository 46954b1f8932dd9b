"""Value checks: each returns None when the value is fine, else the reason."""

from __future__ import annotations

import base64
import binascii
import ipaddress
import re

_IFNAME = re.compile(r"^[A-Za-z0-9_.-]{1,15}$")
_HOSTNAME = re.compile(r"^(?!-)[A-Za-z0-9-]{1,63}(?<!-)$")
_LEASE = re.compile(r"^(\d+[smhd]?|infinite)$")


def ifname(value: str) -> str | None:
    if not _IFNAME.match(value) or value in (".", ".."):
        return "not an interface name (1-15 characters: letters, digits, '_', '-', '.')"
    return None


def hostname(value: str) -> str | None:
    return None if _HOSTNAME.match(value) else "not a host name (letters, digits, '-')"


def interface_address(value: str) -> str | None:
    """An address with its prefix: 192.168.77.1/24."""
    if "/" not in value:
        return "needs a prefix length, like 192.168.77.1/24"
    try:
        iface = ipaddress.ip_interface(value)
    except ValueError:
        return "not an address with a prefix length"
    if iface.ip == iface.network.network_address and iface.network.prefixlen < 31:
        return "is the network's own address, not a host address"
    return None


def address(value: str) -> str | None:
    try:
        ipaddress.ip_address(value)
    except ValueError:
        return "not an IP address"
    return None


def prefix(value: str) -> str | None:
    try:
        ipaddress.ip_network(value, strict=True)
    except ValueError as err:
        return "host bits set in a prefix" if "host bits" in str(err) else "not an IP prefix"
    return None


def wg_key(value: str) -> str | None:
    """A WireGuard key: base64 of exactly 32 bytes (the value is never echoed)."""
    try:
        raw = base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        return "invalid key: not base64"
    return None if len(raw) == 32 else "invalid key: not 32 bytes"


def endpoint(value: str) -> str | None:
    """host:port, or [v6]:port."""
    m = re.match(r"^\[([^\]]+)\]:(\d+)$", value) or re.match(r"^([^:\[\]]+):(\d+)$", value)
    if not m:
        return "not host:port (or [IPv6]:port)"
    host, port = m[1], int(m[2])
    if not 1 <= port <= 65535:
        return "port outside 1-65535"
    if ":" in host and address(host):
        return "not an IPv6 address in [...]"
    if ":" not in host and not re.match(r"^[A-Za-z0-9.-]+$", host):
        return "not a host name or address"
    return None


def port(value: int) -> str | None:
    return None if 1 <= value <= 65535 else "outside 1-65535"


def lease(value: str) -> str | None:
    return None if _LEASE.match(value) else "not a lease time like 12h, 30m or infinite"


def between(low: int, high: int):
    def check(value: int) -> str | None:
        return None if low <= value <= high else f"outside {low}-{high}"
    return check


def one_of(*choices: str):
    def check(value: str) -> str | None:
        return None if value in choices else "must be one of: " + ", ".join(choices)
    return check
