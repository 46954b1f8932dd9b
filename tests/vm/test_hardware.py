"""The image on the machines people flash it onto, as QEMU makes them
(tests/lab/labs.py: IMAGE, the image lab): each guest boots from another disk bus
(NVMe by UEFI; AHCI, virtio-scsi, IDE on the old PC, USB storage on xHCI by
BIOS), with a screen of another kind (virtio-vga, whose KMS driver takes the
screen from the firmware; the standard VGA; none), its NICs of other models
in an order unlike their drivers'. Each boots and logs in, mounts /data from
the disk it booted, takes the WAN and LAN the config names by identity
whatever their kernel names, draws the console UI on a real screen, and a
NIC that no driver took is named by `keel doctor`."""

from __future__ import annotations

import json
import re

import pytest

from tests.lab import labs
from tests.lab.guest import Guest

pytestmark = pytest.mark.lab("image")

# each guest's boot disk's device (a namespace's: its controller), as sysfs
# names the way to it
BUS_IN_SYSFS = {"nvme": r"^/sys/devices/pci[^/]*/[0-9a-f:.]+$", "ahci": r"/ata\d+/",
                "scsi": r"/virtio\d+/host\d+/", "ide": r"/ata\d+/", "usb": r"/usb\d+/"}
DRIVER = {"nvme": "nvme", "ahci": "ahci", "scsi": "virtio_scsi", "ide": "ata_piix",
          "usb": ("usb-storage", "uas")}


@pytest.fixture(scope="module")
def lab(shared_lab):
    return shared_lab


def machine(name: str) -> labs.Machine:
    return next(m for m in labs.IMAGE.machines if m.name == name)


def disk_of(guest: Guest, mountpoint: str) -> tuple[str, str]:
    """The sysfs paths of the disk `mountpoint` is on (by its device number:
    the root is /dev/root to findmnt) and of the device behind it (an NVMe
    namespace hangs under a virtual subsystem: its controller's PCI device)."""
    number = guest.check(f"findmnt -n -o MAJ:MIN {mountpoint}").strip()
    disk = guest.check(f"dirname $(readlink -f /sys/dev/block/{number})")
    device = guest.check(f"case {disk} in */nvme-subsys*) readlink -f /sys/class/nvme/"
                         f"$(ls /sys/class/nvme | head -n 1)/device ;; "
                         f"*) readlink -f {disk}/device ;; esac")
    return disk, device


def test_each_machine_boots_from_its_disk_and_mounts_data_from_it(lab):
    for name, guest in lab.guests.items():
        disk, device = disk_of(guest, "/data")
        assert re.search(BUS_IN_SYSFS[machine(name).disk_bus], device), (name, device)
        assert disk_of(guest, "/")[0] == disk, name
        # the driver that took the disk's controller is the bus's
        drivers = guest.check(f"p={device}; while [ \"$p\" != / ]; do "
                              "[ -e $p/driver ] && basename $(readlink $p/driver); "
                              "p=$(dirname $p); done")
        wanted = DRIVER[machine(name).disk_bus]
        assert set(drivers.split()) & set((wanted,) if isinstance(wanted, str) else wanted), \
            (name, drivers)


def test_the_wan_and_lan_named_by_their_macs_are_those_ports_whatever_their_kernel_names(lab):
    nvme, ahci = lab["nvme"], lab["ahci"]
    for guest, wan_addr, lan_addr in ((nvme, "198.18.1.1", "198.18.2.1"),
                                      (ahci, "198.18.1.2", "198.18.2.2")):
        wan, lan = (next(n for n in guest.nics if n.link == link) for link in ("wan1", "lan1"))
        guest.write_file("/data/keel/keel.toml", f"""
[system]
hostname = "{guest.name}"
[wan]
interface = "mac:{wan.mac}"
mode = "static"
address = "{wan_addr}/24"
gateway = "198.18.1.254"
[lan]
interface = "mac:{lan.mac}"
address = "{lan_addr}/24"
dhcp_start = "198.18.2.100"
dhcp_end = "198.18.2.199"
""")
        guest.check("keel apply", 120)
        for link, address in (("wan1", wan_addr), ("lan1", lan_addr)):
            ifname = guest.ifname(link)  # the kernel's name for the NIC with that MAC
            shown = guest.json(f"ip -j -4 addr show dev {ifname}")
            assert [a["local"] for a in shown[0]["addr_info"]] == [address], (guest.name, link)
        # the kernel's names follow the drivers, not the bus: eth0 is not the WAN here
        print(f"\n{guest.name}: WAN {guest.ifname('wan1')} ({wan.model}), "
              f"LAN {guest.ifname('lan1')} ({lan.model})")
    # traffic crosses both links: e1000e <-> igb, vmxnet3 <-> rtl8139
    assert "3 received" in nvme.check("ping -n -c 3 -i 0.3 -w 30 198.18.1.2", 60)
    assert "3 received" in nvme.check("ping -n -c 3 -i 0.3 -w 30 198.18.2.2", 60)
    # no user config again, as the image lab's later tests take its guests:
    # the login test's first boot offers the setup wizard only then
    for guest in (nvme, ahci):
        guest.check("rm /data/keel/keel.toml")


def test_every_nic_model_has_its_driver_and_a_link(lab):
    seen: dict[str, str] = {}
    for guest in lab.guests.values():
        for nic in guest.nics:
            ifname = guest.ifname(nic.link)
            seen[nic.model] = guest.check(f"basename $(readlink /sys/class/net/{ifname}/"
                                          "device/driver)")
    assert seen == {"e1000e": "e1000e", "igb": "igb", "vmxnet3": "vmxnet3",
                    "rtl8139": "8139cp", "e1000": "e1000",  # (QEMU's is a C+)
                    "virtio-net-pci": "virtio_net"}, seen


def test_keel_doctor_names_a_nic_that_no_driver_took(lab):
    """A NIC whose driver the kernel lacks, as the release kernel on a machine
    it does not know: here the driver is unbound from it (the dev image's
    kernel has them all), and the doctor names the device, not dnsmasq."""
    usb = lab["usb"]
    ifname = usb.ifname("x4")  # igb, not the WAN or LAN of the shipped default's guess
    pci = usb.check(f"basename $(readlink -f /sys/class/net/{ifname}/device)")
    usb.check(f"echo {pci} > /sys/bus/pci/drivers/igb/unbind")
    report = json.loads(usb.run("keel doctor --json", 120).output)
    named = [c for c in report["checks"] if pci.removeprefix("0000:") in json.dumps(c)]
    assert named and any("no driver" in json.dumps(c) for c in named), report
