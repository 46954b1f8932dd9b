"""keel.system.nic_ports on sysfs trees (tests/fixtures/sysfs.py): the KVM
guest as captured, the lab's three NICs as each image names them, a
mini-PC's ports; and the roles resolved on them (keel.model.nic_roles):
the same config finds the same NICs whatever their kernel names."""

from __future__ import annotations

from pathlib import Path

from keel.model import Lan, RouterModel, Wan
from keel.model.nic_roles import resolve_model
from keel.system.nic_ports import read_link_names, read_ports
from tests.fixtures import sysfs


def ports(tmp_path: Path, tree: sysfs.Tree, **kw):
    root = sysfs.build(tmp_path, tree)
    return read_ports(str(root), **kw), read_link_names(str(root))


def test_the_captured_kvm_guest_has_one_port(tmp_path):
    found, names = ports(tmp_path, sysfs.KVM_VPS)
    assert [(p.name, p.identity, p.pci, p.driver, p.link) for p in found] == [
        ("eth0", "mac:02:fc:00:00:00:01", "0000:00:03.0", "virtio_net", "up")]
    assert names == {"eth0", "lo", "ifb0"}


def test_every_port_with_its_driver_mac_link_and_speed(tmp_path):
    found, names = ports(tmp_path, sysfs.MINI_PC_PORTS, permanent_mac=sysfs.MINI_PC_PERMANENT.get)
    by = {p.name: p for p in found}
    assert set(by) == {"enp1s0", "eno1", "enx00e04c680001", "enp3s0", "enp3s0d1"}
    assert "wg0" in names and "br-lan" in names  # virtual: no ports, but present
    igc = by["enp1s0"]
    assert (igc.driver, igc.mac, igc.pci, igc.link, igc.speed_mbps) == (
        "igc", "a8:b8:e0:01:02:03", "0000:01:00.0", "up 2500 Mbit/s", 2500)
    assert by["eno1"].link == "down" and by["eno1"].speed_mbps is None
    usb = by["enx00e04c680001"]
    assert (usb.mac, usb.permanent_mac, usb.usb, usb.pci, usb.link) == (
        "02:00:00:00:00:99", "00:e0:4c:68:00:01", "2-1", "", "no carrier")
    assert usb.identity == "mac:00:e0:4c:68:00:01"
    # without the ethtool reply a set MAC is not an identity, and there is no PCI function
    found, _ = ports(tmp_path / "again", sysfs.MINI_PC_PORTS, permanent_mac=lambda name: None)
    assert {p.name: p for p in found}["enx00e04c680001"].identity == "mac:02:00:00:00:00:99"


def _model(wan: str, lan: str | None = "eth1") -> RouterModel:
    return RouterModel(wans=(Wan(wan),), lans=(Lan(lan, "192.168.77.1/24"),) if lan else ())


def test_the_same_config_finds_the_same_nics_in_either_image(tmp_path):
    """The dev image calls the e1000 eth0, the release kernel the rtl8139:
    a config that names them by what they are gets the same NICs in both."""
    model = _model("pci:0000:00:05.0", "mac:52:54:00:00:03:01")
    got = {}
    for label, tree in (("dev", sysfs.THREE_NICS_DEV_IMAGE), ("release", sysfs.THREE_NICS_RELEASE)):
        found, names = ports(tmp_path / label, tree)
        r = resolve_model(model, found, names)
        assert not r.refused
        by = {p.name: p for p in found}
        got[label] = (by[r.model.wans[0].interface].driver, by[r.model.lans[0].interface].driver)
        assert r.roles[0].line().startswith("WAN  pci:0000:00:05.0 -> eth")
    assert got == {"dev": ("e1000", "8139cp"), "release": ("e1000", "8139cp")}
    # by kernel name, the two images give different NICs: what keel used to do
    by_name = _model("eth0", None)
    drivers = set()
    for label in ("dev", "release"):
        found, names = ports(tmp_path / label, {})
        r = resolve_model(by_name, found, names)
        drivers.add({p.name: p.driver for p in found}[r.model.wans[0].interface])
    assert drivers == {"e1000", "8139cp"}


def test_a_one_nic_machine_gets_no_lan(tmp_path):
    found, names = ports(tmp_path, sysfs.KVM_VPS)
    r = resolve_model(_model("eth0", "eth1"), found, names)
    assert not r.refused and r.model.lans == ()
    assert r.notes == ("lan.interface eth1: no such NIC on this machine: no LAN service (no "
                       "DHCP, DNS or router advertisements) until it is here",)
    assert r.roles[1].name is None


def test_a_wan_on_no_nic_here_or_on_two_is_refused(tmp_path):
    found, names = ports(tmp_path, sysfs.MINI_PC_PORTS)
    r = resolve_model(_model("mac:52:54:00:99:99:99", None), found, names)
    assert r.refused.startswith("wan.interface mac:52:54:00:99:99:99: no NIC here has this "
                                "permanent MAC or MAC; nothing applied")
    r = resolve_model(_model("pci:03:00.0", None), found, names)
    assert "more than one NIC is this: enp3s0, enp3s0d1" in r.refused
    r = resolve_model(_model("mac:00:02:c9:00:00:02", None), found, names)
    assert not r.refused and r.model.wans[0].interface == "enp3s0d1"
    # a LAN on an ambiguous PCI function is left out, not refused
    r = resolve_model(_model("enp1s0", "pci:0000:03:00.0"), found, names)
    assert not r.refused and r.model.lans == () and "more than one NIC" in r.notes[0]


def test_the_wan_and_the_lan_on_one_nic_is_refused(tmp_path):
    found, names = ports(tmp_path, sysfs.MINI_PC_PORTS)
    r = resolve_model(_model("enp1s0", "mac:a8:b8:e0:01:02:03"), found, names)
    assert "are one NIC, enp1s0; nothing applied" in r.refused


def test_a_lan_on_a_bridge_or_by_name_stays_itself(tmp_path):
    found, names = ports(tmp_path, sysfs.MINI_PC_PORTS)
    r = resolve_model(_model("pci:0000:01:00.0", "br-lan"), found, names)
    assert (r.model.wans[0].interface, r.model.lans[0].interface) == ("enp1s0", "br-lan")
    assert r.roles[0].why == "by its PCI function"
