"""Every lab of the suite, as data: its guests, the links between them, the
state it starts in, and the lane that runs it (tests/lab/lanes.py).

A test module names the lab it needs with a marker (tests/lab/marks.py):

    pytestmark = [pytest.mark.lab("bloated"), pytest.mark.measures]

A *shared* lab is built once for the modules naming it, one after the other
(tests/lab/lifetime.py), and the `shared_lab` fixture gives what its
`prepare` returned. A lab that is not shared is built by its module's own
fixture with `TOPOLOGIES[name].build(make_module_lab, ...)`, which then sets up
the rest (pairing's IPv6 provider, the upgrade lab's bundles): its guests and
wires are still declared here, so that one table says what every lab boots.

Addresses, rates and delays of the router labs: tests/lab/topology.py."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.lab import topology as topo
from tests.lab.configs import configure_with_keel
from tests.lab.guest import Guest
from tests.lab.lab import Lab
from tests.lab.paths import LabError

MakeLab = Callable[[], Lab]
DATA_DISK_MIB = 2048  # the image lab's UEFI guest's disk: larger than the image, so /data grows
# the image lab's guest booted by each firmware
FIRMWARE_GUEST = {"uefi": "nvme", "bios": "ahci"}


@dataclass(frozen=True)
class Machine:
    """One guest. `boots`: booted even where a saved state of its kind could
    be restored (tests/lab/saved.py); `disk`: the name of an extra read-only
    disk its module hands to build()."""

    name: str
    smp: int = 1
    memory: int = 512
    firmware: str = "bios"
    disk_size: str | None = None
    tty1_ui: bool = False
    boots: bool = False
    disk: str | None = None
    disk_bus: str = "virtio"  # tests/lab/guest.py: DISK_BUSES
    display: str = "none"  # DISPLAYS


VIRTIO_NET = "virtio-net-pci"


@dataclass(frozen=True)
class Wire:
    """A point-to-point link between guests `a` and `b` (b None: a NIC with
    no peer). Its name is the guests' name for the NIC (Guest.ifname);
    `models`: the QEMU NIC model at each end."""

    name: str
    a: str
    b: str | None = None
    models: tuple[str, str] = (VIRTIO_NET, VIRTIO_NET)


@dataclass(frozen=True)
class Started:
    """A lab with no prepare step: the lab and its guests by name."""

    lab: Lab
    guests: Mapping[str, Guest]

    def __getitem__(self, name: str) -> Guest:
        return self.guests[name]


Prepare = Callable[[Lab, Mapping[str, Guest]], Any]


@dataclass(frozen=True)
class Topology:
    """A lab: `lane` runs every module naming it; `shared`: built once for
    them all (else each module builds its own); `prepare` brings the started
    lab to the state its modules begin from and returns what they get."""

    name: str
    lane: str
    shared: bool
    machines: tuple[Machine, ...]
    wires: tuple[Wire, ...]
    prepare: Prepare | None = None
    about: str = ""

    def __post_init__(self) -> None:
        names = [m.name for m in self.machines]
        if len(set(names)) != len(names):
            raise LabError(f"lab {self.name!r}: a guest named twice in {names}")
        for wire in self.wires:
            for end in (wire.a, wire.b):
                if end is not None and end not in names:
                    raise LabError(f"lab {self.name!r}: wire {wire.name!r} ends at {end!r}, "
                                   f"not one of its guests {names}")

    def define(self, lab: Lab, disks: Mapping[str, Path] | None = None) -> dict[str, Guest]:
        """Define the guests and wires in `lab` (not started)."""
        disks = disks or {}
        guests: dict[str, Guest] = {}
        for m in self.machines:
            if m.disk is not None and m.disk not in disks:
                raise LabError(f"lab {self.name!r}: guest {m.name!r} needs the disk "
                               f"{m.disk!r}, not given")
            guests[m.name] = lab.guest(
                m.name, smp=m.smp, memory=m.memory, firmware=m.firmware,
                disk_size=m.disk_size, tty1_ui=m.tty1_ui, boots=m.boots,
                drives=(disks[m.disk],) if m.disk else (), disk_bus=m.disk_bus,
                display=m.display)
        for w in self.wires:
            lab.link(w.name, guests[w.a], guests[w.b] if w.b else None, models=w.models)
        return guests

    def build(self, make_lab: MakeLab, disks: Mapping[str, Path] | None = None) -> Any:
        """A new lab of this topology, started and prepared."""
        lab = make_lab()
        guests = self.define(lab, disks)
        lab.start()
        return self.prepare(lab, guests) if self.prepare else Started(lab, guests)


# --- what each lab starts from ---------------------------------------------------

@dataclass
class ImageLab:
    """The image on the machines of the hardware matrix (IMAGE below): the
    guests by name, and the two that test what each firmware boots: `uefi`
    (NVMe, a disk larger than the image: /data grows) and `bios` (AHCI, the
    console UI left on tty1 as shipped, 2 vCPUs)."""

    lab: Lab
    guests: Mapping[str, Guest]

    def __getitem__(self, name: str) -> Guest:
        return self.guests[name]

    @property
    def uefi(self) -> Guest:
        return self.by_firmware("uefi")

    @property
    def bios(self) -> Guest:
        return self.by_firmware("bios")

    def by_firmware(self, firmware: str) -> Guest:
        return self.guests[FIRMWARE_GUEST[firmware]]


def _image(lab: Lab, g: Mapping[str, Guest]) -> ImageLab:
    return ImageLab(lab, g)


def router_lab(lab: Lab, g: Mapping[str, Guest]) -> topo.RouterLab:
    """The guests as the router labs' tests know them (no configuration)."""
    return topo.RouterLab(lab, g["edge"], g["hub"], g.get("lan"), g.get("isp"))


def _configured(lab: Lab, g: Mapping[str, Guest]) -> topo.RouterLab:
    rl = router_lab(lab, g)
    rl.hub_pub = configure_with_keel(rl, "/tmp/edge.toml")
    return rl


def _bottleneck(lab: Lab, g: Mapping[str, Guest]) -> topo.RouterLab:
    rl = router_lab(lab, g)
    topo.setup_isp(g["isp"], topo.Bottleneck())
    return rl


def _raw_tunnel(lab: Lab, g: Mapping[str, Guest]) -> topo.RouterLab:
    rl = router_lab(lab, g)
    topo.address_wan(rl)
    topo.raw_tunnel(rl.edge, rl.hub)
    return rl


# --- the labs ----------------------------------------------------------------------
# Latency labs and the upgrade lab give every guest one vCPU (docs/lab.md,
# "The bottleneck and the host's CPU", says what two cost); the router lab's
# edge and hub have two (its console UI test runs the UI beside traffic).
# The edge's WAN is its first NIC (eth0 in the shipped default), LAN its second.
# Every guest has the same memory: a kind of guest (tests/lab/saved.py) is
# vCPUs, memory, NICs and disks, and each kind is booted once per image to be
# saved.

# the router lab runs in the quiet lane, before its measuring labs: it measures
# nothing, but the quiet lane otherwise idled for minutes before its
# host_alone modules, waiting for the main lane
ROUTER = Topology(
    "router", lane="quiet", shared=True,
    machines=(Machine("edge", smp=2), Machine("hub", smp=2), Machine("lan")),
    wires=(Wire("core", "edge", "hub"), Wire("lan", "edge", "lan")),
    prepare=_configured,
    about="lan -> edge -> hub, the WAN joining edge and hub directly, both configured "
          "by keel apply (the edge from /tmp/edge.toml), the tunnel up")

BLOATED = Topology(
    "bloated", lane="quiet", shared=True,
    machines=(Machine("edge"), Machine("hub"), Machine("lan"),
              Machine("isp")),
    wires=(Wire("up", "edge", "isp"), Wire("core", "isp", "hub"), Wire("lan", "edge", "lan")),
    prepare=_bottleneck,
    about="lan -> edge -> isp (topology.Bottleneck: a slow line with a 500 ms FIFO) -> hub; "
          "edge and hub as first started, with no user config: each module configures them")

TUNNEL = Topology(
    "tunnel", lane="quiet", shared=True,
    machines=(Machine("edge"), Machine("hub")),
    wires=(Wire("core", "edge", "hub"),),
    prepare=_raw_tunnel,
    about="edge <-> hub directly, joined by a bare WireGuard tunnel (no keel config): "
          "the tunnel's CPU cost with no bottleneck")

PAIRING = Topology(
    "pairing", lane="main", shared=False,
    machines=(Machine("hub"), Machine("isp", disk="tools"), Machine("edge-a"),
              Machine("edge-b"), Machine("lan")),
    wires=(Wire("up", "edge-a", "isp"), Wire("core", "isp", "hub"), Wire("up2", "edge-b", "isp"),
           Wire("lan-a", "edge-a", "lan"), Wire("lan-b", "edge-b", "lan")),
    about="two edges behind one isp (with the lab tools disk: an IPv6 provider) pair "
          "with a hub; one lan guest holds a host on each edge's LAN")

UPGRADE = Topology(
    "upgrade", lane="side", shared=False,
    machines=(Machine("edge", tty1_ui=True, disk="bundles"), Machine("hub")),
    wires=(Wire("core", "edge", "hub"), Wire("lan", "edge")),
    about="an edge with its bundles disk and a tunnel to its hub: installs and reboots")

# the quiet lane, before its measuring labs: it measures nothing, and the
# main lane (image lab, pairing) is the longer of the two lanes before the
# quiet lane's host_alone modules, which wait for it
RESTORE = Topology(
    "restore", lane="quiet", shared=False,
    machines=(Machine("booted", boots=True), Machine("one"), Machine("two")),
    wires=(Wire("w1", "booted", "one"), Wire("w2", "two")),
    about="one guest booted, two restored from the saved state of its kind")

# the image lab: the machines people flash keel onto, as QEMU can make them.
# Each guest boots from another disk bus, with another screen, its NICs of
# other models in an order unlike their drivers' (e1000e before vmxnet3 and
# igb before rtl8139 on the bus; the kernel's ethN come in driver order).
# The ports' wires: each guest's first NIC (its WAN) and second (its LAN)
# reach another guest. None is restored: each boots (a boot is what is tested).
IMAGE = Topology(
    "image", lane="main", shared=True,
    machines=(Machine("nvme", firmware="uefi", disk_size=f"{DATA_DISK_MIB}M", disk_bus="nvme",
                      display="virtio", tty1_ui=True),
              Machine("ahci", smp=2, disk_bus="ahci", display="std", tty1_ui=True),
              Machine("scsi", disk_bus="scsi"),
              Machine("ide", disk_bus="ide"),
              Machine("usb", disk_bus="usb")),
    wires=(Wire("wan1", "nvme", "ahci", ("e1000e", "igb")),
           Wire("lan1", "nvme", "ahci", ("vmxnet3", "rtl8139")),
           Wire("x1", "ahci", "scsi", ("e1000", VIRTIO_NET)),
           Wire("x2", "scsi", "ide", ("e1000", "rtl8139")),
           Wire("x3", "ide", "usb", ("e1000e", "vmxnet3")),
           Wire("x4", "usb", "nvme", ("igb", "e1000"))),
    prepare=_image,
    about="the image by each firmware (nvme: UEFI, ahci: BIOS) and on every disk bus (NVMe, "
          "AHCI, virtio-scsi, IDE, USB), screens of three kinds, NICs of six models: the boot, "
          "/data, the console, the ports by identity")

# in the order each lane runs its labs (tests/lab/lanes.py): the main lane's
# image lab before pairing
TOPOLOGIES: dict[str, Topology] = {t.name: t for t in (RESTORE, ROUTER, BLOATED, TUNNEL, IMAGE,
                                                         PAIRING, UPGRADE)}


def named(name: str) -> Topology:
    """The lab called `name`; an error naming the known ones otherwise."""
    try:
        return TOPOLOGIES[name]
    except KeyError:
        raise LabError(f"no lab named {name!r} in tests/lab/labs.py "
                       f"(known: {', '.join(TOPOLOGIES)})") from None
