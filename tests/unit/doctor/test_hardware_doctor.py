"""keel doctor's hardware area, as it prints it: a network or storage device
no driver took (read from the sysfs trees of tests/fixtures/sysfs.py),
Secure Boot, and the NICs the config assigns: missing, down, without
carrier."""

from __future__ import annotations

import pytest

from keel.doctor import hardware
from keel.doctor.checks import INFO, OK, WARN, exit_status
from keel.doctor.cli import lines
from keel.model import Lan, RouterModel, Wan
from keel.parse.hardware import Link
from keel.system.hardware import read_devices, read_link, read_secure_boot
from tests.fixtures import sysfs


def printed(tmp_path, tree) -> list[str]:
    return lines(hardware.check_devices(read_devices(str(sysfs.build(tmp_path, tree)))))


def test_a_kvm_guest_where_a_driver_took_each(tmp_path):
    assert printed(tmp_path, sysfs.KVM_VPS) == [
        "hardware:",
        "  [ok  ] drivers: a driver took each network and storage device "
        "(1 network, 1 storage)"]


def test_the_ena_no_driver_took(tmp_path):
    assert printed(tmp_path, sysfs.AWS_NITRO) == [
        "hardware:",
        "  [WARN] 00:05.0 Amazon ENA (network): no driver in this kernel (its driver: ena)"]


def test_hyperv_netvsc_without_its_driver(tmp_path):
    assert printed(tmp_path, sysfs.HYPERV_GEN2) == [
        "hardware:",
        "  [WARN] vmbus 000d3a6e-5a4c-000d-3a6e-5a4c000d3a6e Hyper-V NIC (network): "
        "no driver in this kernel (its driver: hv_netvsc)"]


def test_a_mini_pc_with_pci_ids(tmp_path):
    tree = {**sysfs.MINI_PC, "usr/share/misc/pci.ids": sysfs.PCI_IDS}
    assert printed(tmp_path, tree) == [
        "hardware:",
        "  [WARN] 00:14.3 Intel Corporation Alder Lake-P PCH CNVi WiFi (8086:51f0, network, "
        "not Ethernet): no driver in this kernel",
        "  [WARN] 00:17.0 Intel Corporation Alder Lake-S PCH SATA Controller [AHCI ... "
        "(8086:7ae2, SATA storage): no driver in this kernel (its driver: ahci)",
        "  [WARN] 02:00.0 Realtek RTL8125 2.5GbE (network): no driver in this kernel "
        "(its driver: r8169)",
        "  [WARN] usb 1-4 Phone\\x1b[31m tether (1d6b:0104, network): no driver in this kernel "
        "(its driver: cdc_ncm)",
        "  [WARN] usb 2-1 Realtek RTL8153 (network): no driver in this kernel "
        "(its driver: r8152)"]


def test_no_device_seen(tmp_path):
    assert printed(tmp_path, {}) == [
        "hardware:",
        "  [info] drivers: no network or storage device seen on PCI, USB, Hyper-V's VM bus "
        "or virtio"]


def test_a_device_without_a_driver_is_a_warning_not_a_failure(tmp_path):
    found = hardware.check_devices(read_devices(str(sysfs.build(tmp_path, sysfs.AWS_NITRO))))
    assert [c.status for c in found] == [WARN] and exit_status(found) == 0
    assert found[0].data["ids"] == "1d0f:ec20" and found[0].data["module"] == "ena"


@pytest.mark.parametrize(("data", "line"), [
    (b"\x06\x00\x00\x00\x01",
     "  [WARN] secure boot: on: keel's GRUB is not signed, so a firmware that enforces "
     "Secure Boot will not start it: turn Secure Boot off in the firmware setup"),
    (b"\x06\x00\x00\x00\x00", "  [ok  ] secure boot: off (keel's GRUB is not signed)"),
    (b"\x06\x00\x00\x00\x01\x01",
     "  [info] secure boot: unknown: the firmware's SecureBoot variable is not what UEFI "
     "defines (4 bytes of attributes, 1 of value: 0 or 1)"),
])
def test_secure_boot(tmp_path, data, line):
    sysfs.build(tmp_path, {sysfs.SECURE_BOOT: data})
    assert lines(hardware.check_secure_boot(read_secure_boot(str(tmp_path)))) == [
        "hardware:", line]


def test_no_efi_no_secure_boot_line(tmp_path):
    assert hardware.check_secure_boot(read_secure_boot(str(tmp_path))) == []


EDGE = RouterModel(wans=(Wan("eth0"),), lans=(Lan("eth1", "192.168.77.1/24"),))


@pytest.mark.parametrize(("tree", "status", "line"), [
    (sysfs.net("eth1", "0x1003", "up", "1"), OK, "  [ok  ] eth1 (LAN): up, with carrier"),
    ({}, WARN,
     "  [WARN] eth1 (LAN): not on this machine: ip link shows no eth1, which the config's "
     "lan.interface names"),
    (sysfs.net("eth1", "0x1002", "down", None), WARN,
     "  [WARN] eth1 (LAN): administratively down (state DOWN, no UP flag in ip link): "
     "keel apply sets it up"),
    (sysfs.net("eth1", "0x1003", "down", "0"), WARN,
     "  [WARN] eth1 (LAN): up, but NO-CARRIER: no link (is the cable in, and the other end "
     "on?)"),
    (sysfs.net("eth1", "0x1003", "up", "?"), INFO,
     "  [info] eth1 (LAN): link not readable (operstate up)"),
])
def test_the_assigned_nics(tmp_path, tree, status, line):
    root = str(sysfs.build(tmp_path, {**sysfs.net("eth0", "0x1003", "up", "1"), **tree}))
    found = hardware.check_links(EDGE, {n: read_link(n, root) for n in ("eth0", "eth1")})
    assert [c.status for c in found] == [OK, status]
    assert lines(found) == ["hardware:", "  [ok  ] eth0 (WAN): up, with carrier", line]


def test_an_interface_the_links_were_not_read_for_is_missing():
    found = hardware.check_links(EDGE, {"eth0": Link(True, True, True, "up")})
    assert found[1].status == WARN and found[1].data["present"] is False
