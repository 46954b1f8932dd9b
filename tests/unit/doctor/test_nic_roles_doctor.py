"""keel doctor's lines on the WAN's and the LAN's NICs (keel.doctor.hardware
.check_roles): the kernel name each resolved to, a LAN without service, a
refused WAN, and a kernel name that moved off the NIC first found there."""

from __future__ import annotations

from pathlib import Path

from keel.doctor.checks import OK, WARN
from keel.doctor.hardware import check_roles
from keel.model import Lan, RouterModel, Wan
from keel.model.nic_roles import resolve_model
from keel.parse.nic_first_seen import updated
from keel.system.nic_ports import read_link_names, read_ports
from tests.fixtures import sysfs


def _setup(tmp_path: Path, tree: sysfs.Tree, wan: str, lan: str | None):
    root = str(sysfs.build(tmp_path, tree))
    ports = read_ports(root)
    model = RouterModel(wans=(Wan(wan),),
                        lans=(Lan(lan, "192.168.77.1/24"),) if lan else ())
    return resolve_model(model, ports, read_link_names(root)), ports


def test_each_role_says_its_kernel_name(tmp_path):
    r, ports = _setup(tmp_path, sysfs.THREE_NICS_RELEASE, "pci:0000:00:05.0", "eth0")
    checks = check_roles(r, ports, {})
    assert [(c.name, c.status) for c in checks] == [
        ("wan.interface (WAN)", OK), ("lan.interface (LAN)", OK)]
    assert checks[0].detail == "pci:0000:00:05.0 -> eth2 (e1000, mac:52:54:00:00:05:01)"


def test_a_lan_not_here_and_a_refused_wan_are_warnings(tmp_path):
    r, ports = _setup(tmp_path, sysfs.KVM_VPS, "mac:52:54:00:99:99:99", "eth1")
    checks = check_roles(r, ports, {})
    assert [c.status for c in checks] == [WARN, WARN]
    assert checks[0].detail.endswith("keel apply refuses this config")
    assert "no LAN service" in checks[1].detail


def test_a_kernel_name_that_moved_is_a_warning_with_the_mac_to_write(tmp_path):
    # the first apply (the release image) found the rtl8139 as eth0; on the
    # dev image eth0 is the e1000
    first = updated({}, "wan.interface", "eth0", "mac:52:54:00:00:03:01", "eth0", "8139cp")
    r, ports = _setup(tmp_path, sysfs.THREE_NICS_DEV_IMAGE, "eth0", None)
    (check,) = check_roles(r, ports, first)
    assert check.status == WARN
    assert 'name the port by what it is: wan.interface = "mac:52:54:00:00:03:01"' in check.detail
