"""The labs that several test modules share (tests/lab/lifetime.py: a module names
one with `SHARED_LAB = shared.<builder>`). Each builder gets a factory of
labs and returns the lab booted and set up as far as every module sharing it
needs; a module sets up the rest itself."""

from __future__ import annotations

from dataclasses import dataclass

from tests.lab import topology as topo
from tests.lab.configs import configure_with_keel
from tests.lab.guest import Guest
from tests.lab.lab import Lab
from tests.lab.lifetime import MakeLab

DATA_DISK_MIB = 2048  # the UEFI guest's disk: larger than the image, so /data grows


@dataclass
class ImageLab:
    """The image itself: two guests of it, each booted by one firmware, wired
    by one link; the UEFI guest on a disk larger than the image, the BIOS one
    with the console UI left on tty1 as shipped and a NIC with no peer."""

    lab: Lab
    uefi: Guest
    bios: Guest

    def by_firmware(self, firmware: str) -> Guest:
        return {"uefi": self.uefi, "bios": self.bios}[firmware]


def image_lab(make_lab: MakeLab) -> ImageLab:
    lab = make_lab()
    uefi = lab.guest("uefi", firmware="uefi", disk_size=f"{DATA_DISK_MIB}M")
    bios = lab.guest("bios", firmware="bios", tty1_ui=True)
    lab.link("wire", uefi, bios)
    lab.link("spare", bios)  # enough to hang qdiscs on
    lab.start()
    return ImageLab(lab, uefi, bios)


def router_lab(make_lab: MakeLab) -> topo.RouterLab:
    """`lan` client -> `edge` -> `hub` (2 vCPUs each), the WAN link joining edge
    and hub directly, both configured by `keel apply` (the edge from
    /tmp/edge.toml), the tunnel up."""
    rl = topo.build(make_lab(), lan=True)
    rl.lab.start()
    rl.hub_pub = configure_with_keel(rl, "/tmp/edge.toml")
    return rl


def bloated_lab(make_lab: MakeLab) -> topo.RouterLab:
    """`lan` -> `edge` -> `isp` (topology.Bottleneck: a slow line with a 500 ms
    FIFO) -> `hub`, one vCPU each (topology.build says why). Edge and hub are
    left as first booted, with no user config: each module configures them."""
    rl = topo.build(make_lab(), lan=True, isp=True, smp=1)
    rl.lab.start()
    assert rl.isp and rl.lan
    topo.setup_isp(rl.isp, topo.Bottleneck())
    return rl


def tunnel_lab(make_lab: MakeLab) -> topo.RouterLab:
    """`edge` <-> `hub` directly, one vCPU each, addressed and joined by a bare
    WireGuard tunnel (no keel config): the tunnel's CPU cost with no
    bottleneck. Shared so that it can boot while the quiet lane waits for
    the host to itself (tests/conftest.py's _host_alone)."""
    rl = topo.build(make_lab(), smp=1)
    rl.lab.start()
    topo.address_wan(rl)
    topo.raw_tunnel(rl.edge, rl.hub)
    return rl
