"""The lab's QEMU command lines: links are unix datagram sockets between the
two guests, and no guest ever gets QEMU's user-mode (slirp) network."""

from __future__ import annotations

from pathlib import Path

from tests.lab.accel import Accel
from tests.lab.lab import Lab

TCG = Accel(name="tcg", timeout_factor=4.0, reason="test")


def make_lab(tmp_path: Path) -> Lab:
    lab = Lab(tmp_path, accel=TCG)
    image = tmp_path / "image.qcow2"
    for name in ("lan", "edge", "hub"):
        lab.guest(name, image=image)
    lab.link("lan", lab.guests["lan"], lab.guests["edge"])
    lab.link("wan", lab.guests["edge"], lab.guests["hub"])
    return lab


def netdevs(argv: list[str]) -> list[str]:
    return [argv[i + 1] for i, arg in enumerate(argv) if arg == "-netdev"]


def test_links_are_point_to_point_unix_datagram_sockets(tmp_path):
    lab = make_lab(tmp_path)
    try:
        edge = lab.guests["edge"]
        hub = lab.guests["hub"]
        assert [nic.link for nic in edge.nics] == ["lan", "wan"]
        wan_edge, wan_hub = edge.nics[1], hub.nics[0]
        assert wan_edge.local == wan_hub.remote and wan_edge.remote == wan_hub.local
        for netdev in netdevs(edge.qemu_argv()):
            assert netdev.startswith("dgram,") and "local.type=unix" in netdev
            assert "remote.type=unix" in netdev
    finally:
        lab.close()


def test_no_guest_gets_a_user_mode_network(tmp_path):
    lab = make_lab(tmp_path)
    try:
        for guest in lab.guests.values():
            argv = guest.qemu_argv()
            assert "-nodefaults" in argv
            assert "-nic" not in argv
            assert not any(n.startswith(("user", "socket", "tap")) for n in netdevs(argv))
    finally:
        lab.close()


def test_macs_are_unique_across_the_lab(tmp_path):
    lab = make_lab(tmp_path)
    try:
        macs = [nic.mac for g in lab.guests.values() for nic in g.nics]
        assert len(macs) == len(set(macs)) == 4
    finally:
        lab.close()


def test_tcg_scales_timeouts():
    assert TCG.scale(10) == 40
    assert TCG.qemu_args() == ["-accel", "tcg", "-cpu", "max"]
