"""The NICs that can be a WAN or a LAN, with what names them across reboots
(permanent MAC, PCI function), their driver, link state and speed: read from
/sys/class/net and, for the permanent MAC of a NIC whose address was
changed, the ethtool ioctl (ETHTOOL_GPERMADDR, what `ethtool -P` asks).
The parsing is keel.parse.nic_identity's.

Every reader takes the root of the tree it reads ("/" on the router, a
captured tree in tests); the ioctl is asked only under "/". Bounded: at
most PORTS_MAX NICs, ATTR_MAX bytes an attribute; what cannot be read is
"" or None, never an exception."""

from __future__ import annotations

import array
import contextlib
import fcntl
import os
import socket
import struct
from collections.abc import Callable

from keel.model.nic_roles import Resolution, resolve_model
from keel.model.router import RouterModel
from keel.parse import nic_identity as ident
from keel.system.hardware import ATTR_MAX, IFNAME_MAX, NET, _at, _attr, _driver, _entries

PORTS_MAX = 256
SIOCETHTOOL = 0x8946
IFNAMSIZ = 16

PermanentMac = Callable[[str], "str | None"]


def ethtool_permanent_mac(name: str) -> str | None:
    """The NIC's permanent MAC by ETHTOOL_GPERMADDR (no privilege needed);
    None when the kernel or the driver gives none."""
    if not name or len(name.encode()) >= IFNAMSIZ:
        return None
    reply = array.array("B", struct.pack("=II", ident.ETHTOOL_GPERMADDR, 32) + bytes(32))
    ifreq = struct.pack(f"{IFNAMSIZ}sP", name.encode(), reply.buffer_info()[0])
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            fcntl.ioctl(s.fileno(), SIOCETHTOOL, ifreq)
    except OSError:
        return None
    return ident.perm_addr(reply.tobytes())


def _name_ok(name: str) -> bool:
    return bool(name) and len(name) <= IFNAME_MAX and "/" not in name and name not in (".", "..")


def read_port(name: str, root: str = "/",
              permanent_mac: PermanentMac | None = None) -> ident.Port | None:
    """The NIC `name` as a port; None when it is none (virtual, not
    Ethernet, not there)."""
    if not _name_ok(name):
        return None
    d = _at(root, NET, name)
    try:
        target = os.readlink(d)
    except OSError:
        return None
    def attr(what: str) -> str | None:
        return _attr(os.path.join(d, what))
    assign = attr("addr_assign_type")
    permanent = None
    if assign is not None and assign.strip() != str(ident.ADDR_PERMANENT):
        ask = permanent_mac if permanent_mac is not None else (
            ethtool_permanent_mac if root == "/" else None)
        if ask is not None:
            permanent = ask(name)
    # the carrier and speed files refuse to be read while the NIC is down
    return ident.port(name, target[:4 * ATTR_MAX], attr("type"), attr("address"), assign,
                      permanent, _driver(os.path.join(d, "device")), attr("flags"),
                      attr("operstate"), attr("carrier"), attr("speed"))


def read_ports(root: str = "/", permanent_mac: PermanentMac | None = None) -> list[ident.Port]:
    """Every NIC that can be a WAN or a LAN, by kernel name."""
    ports = []
    for name in _entries(_at(root, NET))[:PORTS_MAX]:
        with contextlib.suppress(OSError, ValueError):
            found = read_port(name, root, permanent_mac)
            if found is not None:
                ports.append(found)
    return ports


def read_link_names(root: str = "/") -> set[str]:
    """Every network device's name, virtual ones too (a bridge can be a LAN)."""
    return set(_entries(_at(root, NET)))


def resolve_in_force(model: RouterModel, root: str = "/") -> Resolution:
    """The config's WAN and LAN resolved on this machine's NICs now, as
    `keel apply` resolves them (keel.model.nic_roles)."""
    return resolve_model(model, read_ports(root), read_link_names(root))
