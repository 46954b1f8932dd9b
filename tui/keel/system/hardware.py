"""The hardware `keel doctor` names: every network and storage device on
the PCI bus, USB, Hyper-V's VM bus and virtio with the driver that took it
(the `driver` link), the firmware's Secure Boot (efivarfs), a NIC's link
(/sys/class/net), and hwdata's pci.ids for names keel's table lacks.

Every reader takes the root of the tree it reads ("/" on the router, a
captured tree in tests) and is bounded: ATTR_MAX bytes of an attribute,
ENTRIES_MAX devices a bus, INTERFACES_MAX interfaces a USB device,
PCI_IDS_MAX bytes of pci.ids. What is odd or unreadable is no device, no
name or "unknown", never an exception; the parsing is keel.parse.hardware's."""

from __future__ import annotations

import dataclasses
import itertools
import os

from keel.parse import hardware as hw

PCI = "/sys/bus/pci/devices"
USB = "/sys/bus/usb/devices"
VMBUS = "/sys/bus/vmbus/devices"
VIRTIO = "/sys/bus/virtio/devices"
NET = "/sys/class/net"
SECURE_BOOT = "/sys/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c"
PCI_IDS = ("/usr/share/hwdata/pci.ids", "/usr/share/misc/pci.ids")

ATTR_MAX = 256  # bytes of one sysfs attribute (sysfs gives at most a page)
ENTRIES_MAX = 512  # devices read on one bus
INTERFACES_MAX = 32  # interfaces read of one USB device
PCI_IDS_MAX = 8 << 20  # bytes of pci.ids read (it is about 1.4 MB)
IFNAME_MAX = 15  # the kernel's IFNAMSIZ - 1


def _at(root: str, path: str, *parts: str) -> str:
    return os.path.join(root, path.lstrip("/"), *parts)


def _read(path: str, limit: int) -> bytes | None:
    """At most limit + 1 bytes of the file (more says: too long); None when
    it cannot be read."""
    try:
        with open(path, "rb") as f:
            return f.read(limit + 1)
    except (OSError, ValueError):
        return None


def _attr(path: str) -> str | None:
    """A sysfs attribute as text; None when unreadable or longer than ATTR_MAX."""
    data = _read(path, ATTR_MAX)
    if data is None or len(data) > ATTR_MAX:
        return None
    return data.decode("utf-8", "replace")


def _driver(device_dir: str) -> str:
    """The name of the driver bound to the device (its `driver` link's
    last part); "" for none. Raw: keel.parse.hardware escapes it."""
    try:
        target = os.readlink(os.path.join(device_dir, "driver"))
    except (OSError, ValueError):
        return ""
    return os.path.basename(target.rstrip("/"))[:hw.NAME_MAX] or "?"


def _entries(path: str) -> list[str]:
    """The first ENTRIES_MAX names in a directory, sorted; [] when unreadable."""
    try:
        with os.scandir(path) as it:
            return sorted(e.name for e in itertools.islice(it, ENTRIES_MAX))
    except (OSError, ValueError):
        return []


def read_pci(root: str = "/", names: bool = True) -> list[hw.Device]:
    """The PCI network and storage devices. `names`: devices without a
    driver that keel's table does not name are named from pci.ids, if the
    machine has it."""
    base = _at(root, PCI)
    devices = []
    for entry in _entries(base):
        d = os.path.join(base, entry)
        device = hw.pci_device(entry, _attr(os.path.join(d, "class")),
                               _attr(os.path.join(d, "vendor")),
                               _attr(os.path.join(d, "device")), _driver(d))
        if device is not None:
            devices.append(device)
    wanted = {d.ids for d in devices if not d.driver and not d.known and "?" not in d.ids}
    if names and wanted and (text := read_pci_ids(root)) is not None:
        listed = hw.pci_ids_names(text, wanted)
        devices = [dataclasses.replace(d, name=listed[d.ids])
                   if not d.driver and not d.known and d.ids in listed else d for d in devices]
    return devices


def read_usb(root: str = "/") -> list[hw.Device]:
    """The USB NICs and mass storage devices (by their interfaces: `1-2:1.0`
    is interface 0 of device `1-2`)."""
    base = _at(root, USB)
    interfaces: dict[str, list[str]] = {}
    for entry in _entries(base):
        device, colon, _ = entry.partition(":")
        if colon and device:
            interfaces.setdefault(device, []).append(entry)
    devices = []
    for device, names in sorted(interfaces.items()):
        d = os.path.join(base, device)
        read = []
        for name in names[:INTERFACES_MAX]:
            i = os.path.join(base, name)
            read.append(hw.UsbInterface(_attr(os.path.join(i, "bInterfaceClass")),
                                        _attr(os.path.join(i, "bInterfaceSubClass")),
                                        _attr(os.path.join(i, "bInterfaceProtocol")),
                                        _driver(i)))
        found = hw.usb_device(device, _attr(os.path.join(d, "idVendor")),
                              _attr(os.path.join(d, "idProduct")),
                              _attr(os.path.join(d, "product")), read)
        if found is not None:
            devices.append(found)
    return devices


def read_vmbus(root: str = "/") -> list[hw.Device]:
    """Hyper-V's synthetic NICs and disks."""
    base = _at(root, VMBUS)
    found = (hw.vmbus_device(e, _attr(os.path.join(base, e, "class_id")),
                             _driver(os.path.join(base, e))) for e in _entries(base))
    return [d for d in found if d is not None]


def read_virtio(root: str = "/") -> list[hw.Device]:
    """virtio NICs, disks and SCSI hosts."""
    base = _at(root, VIRTIO)
    found = (hw.virtio_device(e, _attr(os.path.join(base, e, "device")),
                              _driver(os.path.join(base, e))) for e in _entries(base))
    return [d for d in found if d is not None]


def read_devices(root: str = "/", names: bool = True) -> list[hw.Device]:
    """Every network and storage device keel can see, with its driver. A
    virtio PCI function that virtio_pci took is its virtio device (whose
    driver is virtio_net or virtio_blk): listed once, as that."""
    pci = [d for d in read_pci(root, names) if d.driver != "virtio-pci"]
    return [*pci, *read_usb(root), *read_vmbus(root), *read_virtio(root)]


def read_pci_ids(root: str = "/") -> str | None:
    """hwdata's pci.ids (its first PCI_IDS_MAX bytes, to the last whole
    line), or None where the machine has none."""
    for path in PCI_IDS:
        data = _read(_at(root, path), PCI_IDS_MAX)
        if data is None:
            continue
        if len(data) > PCI_IDS_MAX:
            data = data[:PCI_IDS_MAX].rpartition(b"\n")[0]
        return data.decode("utf-8", "replace")
    return None


def read_secure_boot(root: str = "/") -> str | None:
    """"on", "off" or "unknown" (the variable is not what UEFI defines, or
    cannot be read); None where there is no such variable (not booted by
    UEFI, or efivarfs not mounted)."""
    try:
        with open(_at(root, SECURE_BOOT), "rb") as f:
            data = f.read(64)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except (OSError, ValueError):
        return "unknown"
    return hw.secure_boot(data)


def read_link(name: str, root: str = "/") -> hw.Link:
    """The NIC `name`'s link; not present when there is no such NIC (or the
    name is none the kernel could give)."""
    if not name or len(name) > IFNAME_MAX or "/" in name or "\0" in name \
            or name in (".", ".."):
        return hw.Link(False)
    d = _at(root, NET, name)
    if not os.path.exists(d):
        return hw.Link(False)
    return hw.link(_attr(os.path.join(d, "flags")), _attr(os.path.join(d, "operstate")),
                   _attr(os.path.join(d, "carrier")))
