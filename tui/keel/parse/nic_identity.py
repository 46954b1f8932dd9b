"""A NIC's identity and link as sysfs and the kernel give them: its MAC
(`address`, and whether it is the device's own: `addr_assign_type`), its
permanent MAC (the ethtool ETHTOOL_GPERMADDR reply, what `ethtool -P`
prints), where it sits (the target of its /sys/class/net link:
`../../devices/pci0000:00/0000:00:03.0/virtio2/net/eth0` is the PCI
function 0000:00:03.0), its driver, and its link state and speed.

Pure: text and bytes in, frozen dataclasses out. Strict: a MAC is six pairs
of hex digits (all zeros is none), a PCI address is sysfs's
`dddd:bb:dd.f`, anything else is not one."""

from __future__ import annotations

import re
import struct
from dataclasses import asdict, dataclass
from typing import Any

from keel.shown import shown

ARPHRD_ETHER = 1  # /sys/class/net/X/type of an Ethernet NIC
# addr_assign_type (include/uapi/linux/netdevice.h)
ADDR_PERMANENT, ADDR_RANDOM, ADDR_STOLEN, ADDR_SET = 0, 1, 2, 3
ETHTOOL_GPERMADDR = 0x00000020
ETH_ALEN = 6
SPEED_MAX_MBPS = 1_000_000  # 1 Tbit/s: more is not a speed sysfs gives
NAME_MAX = 60

_MAC = re.compile(r"[0-9a-f]{2}(?::[0-9a-f]{2}){5}")
_PCI = re.compile(r"[0-9a-f]{4,8}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]")
_USB_PORT = re.compile(r"[0-9]+-[0-9]+(?:\.[0-9]+)*")
_VMBUS = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def mac(text: str | None) -> str | None:
    """`52:54:00:AB:cd:01\\n` -> `52:54:00:ab:cd:01`; None for anything else
    (another length, not hex, all zeros)."""
    if text is None or len(text) > 40:
        return None
    s = text.strip().lower()
    if not _MAC.fullmatch(s) or s == "00:00:00:00:00:00":
        return None
    return s


def perm_addr(data: bytes) -> str | None:
    """The reply of ETHTOOL_GPERMADDR (struct ethtool_perm_addr: u32 cmd,
    u32 size, then `size` bytes): the permanent MAC when the device has a
    6-byte one that is not all zeros; None else (a short or odd reply, a
    device without one)."""
    if len(data) < 8:
        return None
    cmd, size = struct.unpack_from("=II", data)
    if cmd != ETHTOOL_GPERMADDR or size != ETH_ALEN or len(data) < 8 + ETH_ALEN:
        return None
    return mac(":".join(f"{b:02x}" for b in data[8:8 + ETH_ALEN]))


def pci_name(text: str) -> str | None:
    """A PCI address as a config may write it (`0000:00:03.0` or lspci's
    `00:03.0`, any case) -> sysfs's `0000:00:03.0`; None else."""
    s = text.strip().lower()
    if re.fullmatch(r"[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]", s):
        s = "0000:" + s
    return s if _PCI.fullmatch(s) else None


@dataclass(frozen=True)
class Placement:
    """Where a NIC sits, from its /sys/class/net link."""

    virtual: bool  # under devices/virtual: a bridge, ifb, WireGuard, lo
    pci: str = ""  # the PCI function nearest the NIC: "0000:00:03.0"
    usb: str = ""  # a USB NIC's port path: "2-1.4"
    vmbus: str = ""  # a Hyper-V synthetic NIC's instance


def placement(target: str) -> Placement:
    """The /sys/class/net/X link's target -> where X sits. The PCI function is
    the last one on the path (a virtio NIC sits on virtio2, which sits on the
    PCI function; a USB NIC on its port, under the USB controller's PCI
    function, which is then not its own: pci stays "")."""
    parts = [p for p in target.split("/") if p not in ("", ".", "..")]
    if not parts or parts[0] != "devices" or "virtual" in parts[:2]:
        return Placement(True)
    pci = usb = vmbus = ""
    for part in parts:
        if _PCI.fullmatch(part):
            pci, usb = part, ""
        elif _USB_PORT.fullmatch(part):
            usb = part
        elif _VMBUS.fullmatch(part):
            vmbus = part
    return Placement(False, "" if usb else pci, usb, vmbus)


def speed_mbps(text: str | None) -> int | None:
    """/sys/class/net/X/speed: Mbit/s; None when unknown (-1, unreadable
    while down, out of range)."""
    if text is None or len(text) > 20:
        return None
    s = text.strip()
    if not s.isascii() or not s.isdigit():
        return None
    value = int(s)
    return value if 0 < value <= SPEED_MAX_MBPS else None


@dataclass(frozen=True)
class Port:
    """A NIC that can be a WAN or a LAN: a device of its own (not virtual),
    Ethernet."""

    name: str  # the kernel's name now: "eth0", "enp1s0"
    mac: str  # its address now ("" unreadable)
    permanent_mac: str  # the device's own ("" not known: not permanent, not given)
    pci: str  # "0000:01:00.0" ("" for a USB, Hyper-V or Xen NIC)
    usb: str  # "2-1" ("" for none)
    driver: str  # "igc", "virtio_net" ("" for none known)
    up: bool | None  # administratively (IFF_UP); None unreadable
    carrier: bool | None  # None unreadable (down)
    speed_mbps: int | None  # None unknown
    operstate: str = ""

    @property
    def identity(self) -> str:
        """What names this port across reboots: its permanent MAC, else
        its PCI function, else its MAC now."""
        if self.permanent_mac:
            return f"mac:{self.permanent_mac}"
        if self.pci:
            return f"pci:{self.pci}"
        return f"mac:{self.mac}" if self.mac else ""

    @property
    def link(self) -> str:
        """"up 1000 Mbit/s", "no carrier", "down"."""
        if self.up is False:
            return "down"
        if self.carrier is False:
            return "no carrier"
        if self.carrier is None:
            return self.operstate or "unknown"
        return "up" + (f" {self.speed_mbps} Mbit/s" if self.speed_mbps else "")

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "identity": self.identity, "link": self.link}


def port(name: str, target: str, type_text: str | None, address: str | None,
         assign_text: str | None, permanent: str | None, driver: str,
         flags_text: str | None, operstate_text: str | None, carrier_text: str | None,
         speed_text: str | None) -> Port | None:
    """The port, from what sysfs (and the ethtool reply, `permanent`, already
    parsed) says of the NIC `name`; None for what is no port: virtual, not
    Ethernet (type 1), or of a type that cannot be read. The permanent MAC is
    the ethtool reply's, else the address when addr_assign_type says it is
    the device's own (0)."""
    where = placement(target)
    kind = type_text.strip() if type_text is not None and len(type_text) < 12 else ""
    if where.virtual or kind != str(ARPHRD_ETHER):
        return None
    now = mac(address) or ""
    assign = assign_text.strip() if assign_text is not None and len(assign_text) < 12 else ""
    perm = permanent or (now if assign == str(ADDR_PERMANENT) else "")
    flags = _hex(flags_text)
    carrier = None if carrier_text is None else {"0": False, "1": True}.get(carrier_text.strip())
    up = None if flags is None else bool(flags & 0x1)
    return Port(shown(name, 20), now, perm, where.pci, where.usb, shown(driver, NAME_MAX),
                up, carrier if up is not False else None,
                speed_mbps(speed_text) if carrier else None,
                "" if operstate_text is None else shown(operstate_text.strip(), 20))


def _hex(text: str | None) -> int | None:
    if text is None or len(text) > 20:
        return None
    s = text.strip().lower().removeprefix("0x")
    try:
        return int(s, 16) if s and s.isascii() and s.isalnum() else None
    except ValueError:
        return None
