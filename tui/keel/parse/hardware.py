"""Network and storage hardware in words, from what sysfs holds: a PCI
device's class, vendor and device (`0x020000`, `0x1d0f`, `0xec20`), a USB
device's ids and interfaces' classes, a Hyper-V VM bus device's class GUID,
a virtio device's id; the names of the devices people flash keel onto (one
small table, PCI_DEVICES) and, for others, hwdata's pci.ids read strictly;
the Secure Boot variable's bytes; a NIC's flags, operstate and carrier.

Pure: text and bytes in, frozen dataclasses out. Strict and bounded: an id
that is not what sysfs prints is no id, a name is escaped for a terminal
(keel.shown) and cut to NAME_MAX characters, pci.ids is read for at most
PCI_IDS_LINES lines."""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from typing import Any

from keel.shown import shown

NETWORK, STORAGE = "network", "storage"
NAME_MAX = 60  # characters of a name shown (escaped)
ID_MAX = 32  # characters of an id attribute: sysfs prints "0x1d0f\n"
PCI_IDS_LINES = 200_000  # pci.ids has about 40 000


@dataclass(frozen=True)
class Known:
    name: str
    module: str = ""  # the kernel module that drives it ("" not known)


def _same(vendor: int, devices: tuple[int, ...], name: str,
          module: str) -> dict[tuple[int, int], Known]:
    return {(vendor, d): Known(name, module) for d in devices}


# The devices people flash keel onto: (vendor, device) -> name and module.
# Ids from the 6.12 drivers' tables (ena_pci_id_tbl.h, gve.h, pci_ids.h,
# e1000e/hw.h, igb/e1000_hw.h, igc_hw.h, ixgbe_type.h, i40e_devids.h,
# iavf_devids.h, ice_devids.h, r8169_main.c, mlx5 and mlx4 main.c).
PCI_DEVICES: dict[tuple[int, int], Known] = {
    **_same(0x1D0F, (0x0EC2, 0x1EC2, 0xEC20, 0xEC21), "Amazon ENA", "ena"),
    **_same(0x1AE0, (0x0042,), "Google gVNIC", "gve"),
    **_same(0x15AD, (0x07B0,), "VMware vmxnet3", "vmxnet3"),
    **_same(0x15AD, (0x07C0,), "VMware PVSCSI", "vmw_pvscsi"),
    **_same(0x1AF4, (0x1000, 0x1041), "virtio network", "virtio_pci"),
    **_same(0x1AF4, (0x1001, 0x1042), "virtio disk", "virtio_pci"),
    **_same(0x1AF4, (0x1004, 0x1048), "virtio SCSI", "virtio_pci"),
    **_same(0x8086, (0x156F, 0x1570, 0x15B7, 0x15B8, 0x15B9, 0x15D7, 0x15D8, 0x15E3, 0x15D6,
                     0x15BD, 0x15BE, 0x15BB, 0x15BC, 0x15DF, 0x15E0, 0x15E1, 0x15E2, 0x0D4E,
                     0x0D4F, 0x0D4C, 0x0D4D, 0x0D53, 0x0D55, 0x15FB, 0x15FC, 0x15F9, 0x15FA,
                     0x15F4, 0x15F5, 0x0DC5, 0x0DC6, 0x1A1E, 0x1A1F, 0x1A1C, 0x1A1D, 0x0DC7,
                     0x0DC8, 0x550A, 0x550B, 0x550C, 0x550D, 0x550E, 0x550F, 0x5510, 0x5511,
                     0x57A0, 0x57A1, 0x57B3, 0x57B4, 0x57B5, 0x57B6, 0x57B7, 0x57B8),
            "Intel I219", "e1000e"),
    **_same(0x8086, (0x1533, 0x1536, 0x1537, 0x1538, 0x157B, 0x157C), "Intel I210", "igb"),
    **_same(0x8086, (0x1539,), "Intel I211", "igb"),
    **_same(0x8086, (0x1521, 0x1522, 0x1523, 0x1524), "Intel I350", "igb"),
    **_same(0x8086, (0x15F2, 0x15F3, 0x15F8, 0x3100, 0x3101, 0x5502, 0x0D9F, 0x15FD),
            "Intel I225", "igc"),
    **_same(0x8086, (0x125B, 0x125C, 0x125D, 0x3102, 0x5503, 0x125F), "Intel I226", "igc"),
    **_same(0x8086, (0x10F7, 0x1514, 0x1517, 0x151C, 0x10F9, 0x10FB, 0x152A, 0x1529, 0x1507,
                     0x154D, 0x1557, 0x10FC, 0x10F8, 0x154F, 0x154A, 0x1558),
            "Intel 82599", "ixgbe"),
    **_same(0x8086, (0x10ED,), "Intel 82599 VF", "ixgbevf"),
    **_same(0x8086, (0x1572, 0x1580, 0x1581, 0x1583, 0x1584, 0x1585, 0x1586, 0x1587, 0x1588,
                     0x1589, 0x158A, 0x158B, 0x15FF, 0x104E, 0x104F, 0x101F, 0x0DD2),
            "Intel X710", "i40e"),
    **_same(0x8086, (0x154C, 0x1889), "Intel X710/E810 VF", "iavf"),
    **_same(0x8086, (0x1591, 0x1592, 0x1593, 0x1599, 0x159A, 0x159B), "Intel E810", "ice"),
    **_same(0x10EC, (0x8125,), "Realtek RTL8125 2.5GbE", "r8169"),
    **_same(0x10EC, (0x8126,), "Realtek RTL8126 5GbE", "r8169"),
    **_same(0x10EC, (0x8168, 0x8161), "Realtek RTL8111/8168", "r8169"),
    **_same(0x15B3, (0x1003, 0x1004, 0x1007), "Mellanox ConnectX-3", "mlx4_en"),
    **_same(0x15B3, (0x1013, 0x1014, 0x1015, 0x1016, 0x1017, 0x1018, 0x1019, 0x101A, 0x101B,
                     0x101C, 0x101D, 0x101E, 0x101F, 0x1021, 0x1023),
            "Mellanox ConnectX", "mlx5_core"),
}
# every network device of these vendors, where the table has no entry
PCI_VENDOR_NICS = {0x1D6A: Known("Aquantia AQtion", "atlantic")}
# a class that names its driver: NVMe, SATA (AHCI)
PCI_CLASS_MODULES = {0x010802: "nvme", 0x010601: "ahci"}
PCI_VENDORS = {0x8086: "Intel", 0x10EC: "Realtek", 0x15B3: "Mellanox", 0x1D6A: "Aquantia",
               0x1D0F: "Amazon", 0x1AE0: "Google", 0x15AD: "VMware", 0x1AF4: "virtio",
               0x1414: "Microsoft", 0x14E4: "Broadcom", 0x1022: "AMD", 0x1000: "LSI",
               0x144D: "Samsung", 0x15B7: "SanDisk/WD", 0x1C5C: "SK hynix", 0x1344: "Micron",
               0x1987: "Phison", 0x2646: "Kingston", 0x1B4B: "Marvell", 0x1B21: "ASMedia",
               0x197B: "JMicron", 0x5853: "Xen"}
# the class in words: (class >> 8) -> words; else "network" or "storage"
PCI_SUBCLASSES = {0x0100: "SCSI storage", 0x0101: "IDE storage", 0x0104: "RAID storage",
                  0x0105: "ATA storage", 0x0106: "SATA storage", 0x0107: "SAS storage",
                  0x0108: "NVMe storage", 0x0207: "InfiniBand network",
                  0x0280: "network, not Ethernet"}

# USB NICs whose first configuration is the vendor's own interface class
USB_DEVICES = {(0x0BDA, 0x8152): Known("Realtek RTL8152", "r8152"),
               (0x0BDA, 0x8153): Known("Realtek RTL8153", "r8152"),
               (0x0BDA, 0x8156): Known("Realtek RTL8156", "r8152"),
               (0x0B95, 0x1790): Known("ASIX AX88179", "ax88179_178a"),
               (0x0B95, 0x178A): Known("ASIX AX88178A", "ax88179_178a")}
# CDC communications subclasses that are a network: ECM, MDLM, EEM, NCM, MBIM
USB_CDC_NETWORK = {0x06: "cdc_ether", 0x0A: "", 0x0C: "", 0x0D: "cdc_ncm", 0x0E: ""}

# Hyper-V's VM bus: class GUID -> kind, name and module (include/linux/hyperv.h)
VMBUS_CLASSES = {
    "f8615163-df3e-46c5-913f-f2d2f965ed0e": (NETWORK, Known("Hyper-V NIC", "hv_netvsc")),
    "ba6163d9-04a1-4d29-b605-72e2ffb1dc7f": (STORAGE, Known("Hyper-V SCSI disk", "hv_storvsc")),
    "32412632-86cb-44a2-9b5c-50d1417354f5": (STORAGE, Known("Hyper-V IDE disk", "hv_storvsc")),
}
# virtio device ids (the virtio spec): network, block, SCSI
VIRTIO_DEVICES = {1: (NETWORK, Known("virtio-net", "virtio_net")),
                  2: (STORAGE, Known("virtio-blk", "virtio_blk")),
                  8: (STORAGE, Known("virtio-scsi", "virtio_scsi"))}

_HEX = frozenset("0123456789abcdefABCDEF")
_GUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_PCI_ADDRESS = re.compile(r"([0-9a-f]{4,8}):([0-9a-f]{2}:[0-9a-f]{2}\.[0-7])")
_IDS_VENDOR = re.compile(r"([0-9a-f]{4})  (\S[^\t]*)")
_IDS_DEVICE = re.compile(r"\t([0-9a-f]{4})  (\S[^\t]*)")


@dataclass(frozen=True)
class Device:
    """A network or storage device and the driver that took it, if one did."""

    bus: str  # "pci", "usb", "vmbus", "virtio"
    address: str  # "00:05.0", "1-2", the VM bus instance, "virtio2" (escaped)
    kind: str  # NETWORK or STORAGE
    name: str  # "Amazon ENA", "Intel 8086:1a1c" (escaped)
    words: str  # the class in words: "network", "NVMe storage"
    ids: str  # "1d0f:ec20" (PCI, USB), the class GUID (VM bus), "virtio 1"
    driver: str  # the driver bound to it; "" for none (escaped)
    module: str = ""  # the module that would drive it; "" when not known
    known: bool = False  # named by keel's table (not by pci.ids or its ids)

    @property
    def label(self) -> str:
        """`00:05.0 Amazon ENA (network)`; the ids beside the class where the
        name is not keel's own (`usb 1-2 USB 10/100 LAN (0bda:8153, network)`)."""
        where = self.address if self.bus == "pci" else f"{self.bus} {self.address}"
        what = self.words if self.known or self.ids in self.name else f"{self.ids}, {self.words}"
        return f"{where} {self.name} ({what})"

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def hex_id(text: str | None, bits: int = 16) -> int | None:
    """`0x1d0f\\n` or `1d0f` -> 0x1d0f; None for anything else (empty, too
    long, not hexadecimal, more than `bits` bits)."""
    if text is None or len(text) > ID_MAX:
        return None
    s = text.strip()
    if s[:2] in ("0x", "0X"):
        s = s[2:]
    if not s or not set(s) <= _HEX:
        return None
    value = int(s, 16)
    return value if value < 1 << bits else None


def name_shown(text: str) -> str:
    """A name from outside (a sysfs string, a USB descriptor, pci.ids) for
    the terminal: one line, escaped, at most NAME_MAX characters."""
    return shown(" ".join(text.split()), NAME_MAX)


def pci_address(name: str) -> str:
    """`0000:00:05.0` -> `00:05.0` (lspci's way); another domain kept; any
    other name escaped."""
    m = _PCI_ADDRESS.fullmatch(name)
    if m is None:
        return name_shown(name)
    return m[2] if int(m[1], 16) == 0 else name


def pci_kind(cls: int) -> str | None:
    return {0x01: STORAGE, 0x02: NETWORK}.get(cls >> 16)


def pci_device(address: str, cls_text: str | None, vendor_text: str | None,
               device_text: str | None, driver: str, listed: str | None = None) -> Device | None:
    """The device, when its class is network (0x02xxxx) or storage
    (0x01xxxx); None otherwise or when its class is not readable. Named by
    keel's table, then by `listed` (its pci.ids name), then by its ids."""
    cls = hex_id(cls_text, 24)
    kind = None if cls is None else pci_kind(cls)
    if cls is None or kind is None:
        return None
    vendor, device = hex_id(vendor_text), hex_id(device_text)
    ids = ("????" if vendor is None else f"{vendor:04x}") + ":" + \
        ("????" if device is None else f"{device:04x}")
    words = PCI_SUBCLASSES.get(cls >> 8, kind)
    known = PCI_DEVICES.get((vendor, device)) if vendor is not None and device is not None \
        else None
    if known is None and kind == NETWORK and vendor is not None:
        known = PCI_VENDOR_NICS.get(vendor)
    if known is not None:
        name, module = known.name, known.module
    else:
        vendor_word = PCI_VENDORS.get(vendor) if vendor is not None else None
        name = name_shown(listed) if listed else f"{vendor_word} {ids}" if vendor_word else ids
        module = PCI_CLASS_MODULES.get(cls, "")
    return Device("pci", pci_address(address), kind, name, words, ids, name_shown(driver),
                  module, known is not None)


@dataclass(frozen=True)
class UsbInterface:
    cls: str | None  # bInterfaceClass, bInterfaceSubClass, bInterfaceProtocol as read
    subclass: str | None
    protocol: str | None
    driver: str  # "" for none


def usb_interface_kind(cls: int | None, subclass: int | None, protocol: int | None) -> str | None:
    """NETWORK for a CDC network function's communications interface (ECM,
    MDLM, EEM, NCM, MBIM) or RNDIS's; STORAGE for mass storage; None else.
    A CDC data interface (0x0a) is not counted: it comes with a
    communications interface, and a serial adapter (CDC ACM) has one too."""
    if cls == 0x02 and (subclass in USB_CDC_NETWORK or (subclass, protocol) == (0x02, 0xFF)):
        return NETWORK
    if (cls, subclass, protocol) == (0xE0, 0x01, 0x03):  # RNDIS as a wireless controller
        return NETWORK
    return STORAGE if cls == 0x08 else None


def usb_device(address: str, vendor_text: str | None, product_id_text: str | None,
               product: str | None, interfaces: list[UsbInterface]) -> Device | None:
    """The USB device, when it is a USB NIC keel knows or has a network or
    mass storage interface; its driver is the first such interface's that
    has one ("" when none has). None for any other device."""
    vendor, product_id = hex_id(vendor_text), hex_id(product_id_text)
    ids = ("????" if vendor is None else f"{vendor:04x}") + ":" + \
        ("????" if product_id is None else f"{product_id:04x}")
    known = USB_DEVICES.get((vendor, product_id)) if vendor is not None \
        and product_id is not None else None
    kinds = [(usb_interface_kind(hex_id(i.cls, 8), hex_id(i.subclass, 8),
                                 hex_id(i.protocol, 8)), i) for i in interfaces]
    ours = [(k, i) for k, i in kinds if k is not None]
    if known is not None:
        kind, ours = NETWORK, [(NETWORK, i) for _, i in kinds]
    elif ours:
        kind = NETWORK if any(k == NETWORK for k, _ in ours) else STORAGE
        ours = [(k, i) for k, i in ours if k == kind]
    else:
        return None
    driver = next((i.driver for _, i in ours if i.driver), "")
    if known is not None:
        name, module = known.name, known.module
    else:
        name = name_shown(product) if product and product.strip() else ids
        first = ours[0][1]
        module = ("usb_storage" if kind == STORAGE
                  else USB_CDC_NETWORK.get(hex_id(first.subclass, 8) or 0, "")
                  if hex_id(first.cls, 8) == 0x02 else "")
    return Device("usb", name_shown(address), kind, name, kind, ids, name_shown(driver), module,
                  known is not None)


def vmbus_class(text: str | None) -> str | None:
    """`{f8615163-df3e-46c5-913f-f2d2f965ed0e}\\n` -> the GUID; None else."""
    if text is None or len(text) > 64:
        return None
    s = text.strip().lower()
    s = s[1:-1] if s[:1] == "{" and s[-1:] == "}" else s
    return s if _GUID.fullmatch(s) else None


def vmbus_device(address: str, class_text: str | None, driver: str) -> Device | None:
    """A Hyper-V synthetic NIC or disk (netvsc, storvsc); None for the VM
    bus's other devices (heartbeat, time sync, keyboard...)."""
    guid = vmbus_class(class_text)
    if guid is None or guid not in VMBUS_CLASSES:
        return None
    kind, known = VMBUS_CLASSES[guid]
    return Device("vmbus", name_shown(address), kind, known.name, kind, guid, name_shown(driver),
                  known.module, True)


def virtio_device(address: str, device_text: str | None, driver: str) -> Device | None:
    """A virtio NIC, disk or SCSI host (the driver of its virtio device, not
    of the PCI function under it, which virtio_pci takes)."""
    device = hex_id(device_text, 32)
    if device not in VIRTIO_DEVICES:
        return None
    kind, known = VIRTIO_DEVICES[device]
    return Device("virtio", name_shown(address), kind, known.name, kind, f"virtio {device}",
                  name_shown(driver), known.module, True)


def pci_ids_names(text: str, wanted: set[str]) -> dict[str, str]:
    """hwdata's pci.ids: `vendor device` names of the wanted ids
    ("8086:1a1c" -> "Intel Corporation Ethernet Connection (17) I219-LM"),
    escaped. Strict: a vendor line is 4 hex digits, two spaces and a name,
    a device line the same after one tab; anything else is skipped (a
    malformed vendor line drops its devices); the class list ends it; at
    most PCI_IDS_LINES lines are read."""
    vendors = {w.split(":", 1)[0] for w in wanted}
    found: dict[str, str] = {}
    vendor, vendor_name = None, ""
    for n, line in enumerate(text.split("\n")):
        if n >= PCI_IDS_LINES or len(found) == len(wanted):
            break
        if not line or line[0] == "#":
            continue
        if line[0] == "C" and line[1:2] == " ":  # the device classes follow
            break
        if line[0] != "\t":
            m = _IDS_VENDOR.fullmatch(line.rstrip())
            vendor, vendor_name = (m[1], m[2]) if m else (None, "")
            continue
        if vendor not in vendors or line[1:2] == "\t":
            continue
        m = _IDS_DEVICE.fullmatch(line.rstrip())
        if m and f"{vendor}:{m[1]}" in wanted:
            found[f"{vendor}:{m[1]}"] = name_shown(f"{vendor_name} {m[2]}")
    return found


def secure_boot(data: bytes) -> str:
    """The SecureBoot EFI variable as efivarfs gives it (4 bytes of
    attributes, then 1 byte of data): "on", "off", or "unknown" for any
    other length or value."""
    if len(data) != 5:
        return "unknown"
    return {0: "off", 1: "on"}.get(data[4], "unknown")


@dataclass(frozen=True)
class Link:
    """A NIC as /sys/class/net has it."""

    present: bool
    up: bool | None = None  # administratively (IFF_UP in flags); None: unreadable
    carrier: bool | None = None  # None: unreadable (the kernel refuses it while down)
    operstate: str = ""  # "up", "down", "lowerlayerdown", ... (escaped)


def link(flags_text: str | None, operstate_text: str | None, carrier_text: str | None) -> Link:
    """A present NIC's state from its `flags` (hex), `operstate` and
    `carrier` files (None: unreadable)."""
    flags = hex_id(flags_text, 32)
    carrier = None if carrier_text is None else {"0": False, "1": True}.get(carrier_text.strip())
    operstate = "" if operstate_text is None else shown(operstate_text.strip(), 20)
    return Link(True, None if flags is None else bool(flags & 0x1), carrier, operstate)
