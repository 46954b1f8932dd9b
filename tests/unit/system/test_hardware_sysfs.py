"""The hardware keel doctor names, read from sysfs trees under tmp_path
(tests/fixtures/sysfs.py: a KVM guest as captured, an AWS Nitro instance,
Hyper-V Gen2, a mini-PC): network and storage devices on PCI, USB, the VM
bus and virtio with their drivers, names from keel's table and from
pci.ids, Secure Boot, a NIC's link. And whatever bytes the files hold, the
readers raise nothing and every name they give is printable."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from keel import kernel_features
from keel.parse import hardware as hw
from keel.system.hardware import (
    PCI_IDS_MAX,
    read_devices,
    read_link,
    read_pci_ids,
    read_secure_boot,
)
from tests.fixtures import sysfs


def devices(tmp_path: Path, tree: sysfs.Tree, **kw) -> list[hw.Device]:
    return read_devices(str(sysfs.build(tmp_path, tree)), **kw)


def test_a_kvm_guest_virtio_listed_once_each_with_its_driver(tmp_path):
    """The PCI functions virtio_pci took are their virtio devices; the host
    bridge and the balloon, vsock and rng devices are neither network nor
    storage."""
    found = devices(tmp_path, sysfs.KVM_VPS)
    assert [(d.bus, d.address, d.kind, d.name, d.driver) for d in found] == [
        ("virtio", "virtio1", "storage", "virtio-blk", "virtio_blk"),
        ("virtio", "virtio2", "network", "virtio-net", "virtio_net")]


def test_aws_the_ena_no_driver_took(tmp_path):
    found = devices(tmp_path, sysfs.AWS_NITRO)
    assert [(d.label, d.driver, d.module) for d in found] == [
        ("00:04.0 Amazon 1d0f:8061 (NVMe storage)", "nvme", "nvme"),
        ("00:05.0 Amazon ENA (network)", "", "ena")]


def test_hyperv_netvsc_and_storvsc_on_the_vm_bus(tmp_path):
    found = devices(tmp_path, sysfs.HYPERV_GEN2)
    assert [(d.label, d.driver) for d in found] == [
        ("vmbus 000d3a6e-5a4c-000d-3a6e-5a4c000d3a6e Hyper-V NIC (network)", ""),
        ("vmbus f8b3781a-1e82-4818-a1c3-63d806ec15bb Hyper-V SCSI disk (storage)",
         "hv_storvsc")]


def test_a_mini_pc_named_by_the_table_by_vendor_and_by_usb(tmp_path):
    found = devices(tmp_path, sysfs.MINI_PC)
    assert [(d.label, d.driver, d.module) for d in found] == [
        ("00:14.3 Intel 8086:51f0 (network, not Ethernet)", "", ""),
        ("00:17.0 Intel 8086:7ae2 (SATA storage)", "", "ahci"),
        ("01:00.0 Intel I226 (network)", "igc", "igc"),
        ("02:00.0 Realtek RTL8125 2.5GbE (network)", "", "r8169"),
        ("03:00.0 Samsung 144d:a80a (NVMe storage)", "nvme", "nvme"),
        # the device's own string, escaped (it holds an ESC)
        ("usb 1-4 Phone\\x1b[31m tether (1d6b:0104, network)", "", "cdc_ncm"),
        ("usb 2-1 Realtek RTL8153 (network)", "", "r8152"),
        ("usb 2-2 Ultra Fit (0781:5583, storage)", "usb-storage", "usb_storage")]
    # the root hub, and the Arduino's CDC ACM serial port, are not a network


@pytest.mark.parametrize("where", ["usr/share/hwdata/pci.ids", "usr/share/misc/pci.ids"])
def test_pci_ids_names_what_the_table_does_not(tmp_path, where):
    tree = {**sysfs.MINI_PC, where: sysfs.PCI_IDS}
    named = {d.address: d.label for d in devices(tmp_path, tree) if d.bus == "pci"}
    assert named["00:14.3"] == ("00:14.3 Intel Corporation Alder Lake-P PCH CNVi WiFi "
                                "(8086:51f0, network, not Ethernet)")
    assert named["00:17.0"].startswith("00:17.0 Intel Corporation Alder Lake-S PCH SATA ")
    assert named["02:00.0"] == "02:00.0 Realtek RTL8125 2.5GbE (network)"  # the table first
    assert named["03:00.0"] == "03:00.0 Samsung 144d:a80a (NVMe storage)"  # has its driver


def test_pci_ids_is_read_strictly():
    text = ("8086  Intel Corporation\n"
            "\t51f0  WiFi\n"
            "\t\t51f0 0001  a subsystem, not a device\n"
            "\t7ae2 one space: not a device line\n"
            "10EC  upper case: not a vendor line\n"
            "\t8125  so this is no device of any vendor's\n"
            "C 02  Network controller\n"
            "\t8086  past the classes: never read\n")
    assert hw.pci_ids_names(text, {"8086:51f0", "8086:7ae2", "10ec:8125"}) == {
        "8086:51f0": "Intel Corporation WiFi"}
    cut = hw.pci_ids_names(f"8086  Intel\n\t51f0  {'x' * 500}\x07\n", {"8086:51f0"})
    assert len(cut["8086:51f0"]) == hw.NAME_MAX and cut["8086:51f0"].endswith("...")


def test_pci_ids_read_is_bounded(tmp_path):
    big = tmp_path / "usr/share/hwdata/pci.ids"
    big.parent.mkdir(parents=True)
    big.write_bytes(b"8086  Intel\n" + b"#" * PCI_IDS_MAX + b"\n\t51f0  WiFi\n")
    text = read_pci_ids(str(tmp_path))
    assert text is not None and len(text) <= PCI_IDS_MAX and "51f0" not in text
    assert read_pci_ids(str(tmp_path / "nowhere")) is None


@pytest.mark.parametrize(("data", "state"), [
    (b"\x06\x00\x00\x00\x01", "on"),
    (b"\x06\x00\x00\x00\x00", "off"),
    (b"\x06\x00\x00\x00\x02", "unknown"),
    (b"\x06\x00\x00\x00", "unknown"),
    (b"\x06\x00\x00\x00\x01\x00", "unknown"),
    (b"", "unknown"),
])
def test_secure_boot(tmp_path, data, state):
    sysfs.build(tmp_path, {sysfs.SECURE_BOOT: data})
    assert read_secure_boot(str(tmp_path)) == state


def test_no_secure_boot_variable_says_nothing(tmp_path):
    assert read_secure_boot(str(tmp_path)) is None  # not booted by UEFI
    (tmp_path / "sys/firmware/efi/efivars").mkdir(parents=True)
    assert read_secure_boot(str(tmp_path)) is None  # efivarfs not mounted


@pytest.mark.parametrize(("tree", "link"), [
    (sysfs.net("eth0", "0x1003", "up", "1"), hw.Link(True, True, True, "up")),
    (sysfs.net("eth0", "0x1002", "down", None), hw.Link(True, False, None, "down")),
    (sysfs.net("eth0", "0x1003", "down", "0"), hw.Link(True, True, False, "down")),
    (sysfs.net("eth0", "zz", "up\x1b", "2"), hw.Link(True, None, None, "up\\x1b")),
    (sysfs.net("eth9", "0x1003", "up", "1"), hw.Link(False)),
])
def test_a_nics_link(tmp_path, tree, link):
    assert read_link("eth0", str(sysfs.build(tmp_path, tree))) == link


@pytest.mark.parametrize("name", ["", ".", "..", "../../etc", "a" * 16, "eth0\0"])
def test_a_name_no_nic_can_have_is_absent(tmp_path, name):
    sysfs.build(tmp_path, sysfs.net("eth0", "0x1003", "up", "1"))
    assert read_link(name, str(tmp_path)) == hw.Link(False)


def test_the_table_names_modules_the_kernel_carries():
    """Each driver keel's table names is one of keel.kernel_features' list."""
    carried = {f.module for f in kernel_features.FEATURES if f.module}
    named = {k.module for k in hw.PCI_DEVICES.values()} | {
        k.module for k in (*hw.PCI_VENDOR_NICS.values(), *hw.USB_DEVICES.values())} | {
        k.module for _, k in (*hw.VMBUS_CLASSES.values(), *hw.VIRTIO_DEVICES.values())} | {
        *hw.PCI_CLASS_MODULES.values(), *(m for m in hw.USB_CDC_NETWORK.values() if m)}
    assert named - carried == set()


@pytest.mark.parametrize(("text", "bits", "value"), [
    ("0x1d0f\n", 16, 0x1D0F), ("1d0f", 16, 0x1D0F), ("0x020000\n", 24, 0x020000),
    ("0x10000", 16, None), ("", 16, None), ("0x", 16, None), ("1_0", 16, None),
    ("١٢", 16, None), ("0x" + "0" * 40, 16, None), (None, 16, None),
])
def test_hex_ids_are_what_sysfs_prints(text, bits, value):
    assert hw.hex_id(text, bits) == value


# --- any bytes in the files: no exception, printable names ------------------

NAME = st.binary(min_size=1, max_size=40).filter(
    lambda b: b"/" not in b and b"\0" not in b and b not in (b".", b".."))
CONTENT = st.one_of(st.binary(max_size=300),
                    st.sampled_from([b"0x020000\n", b"0x010802\n", b"0x1d0f\n", b"0xec20\n",
                                     b"02\n", b"08\n", b"0d\n", b"0bda\n", b"8153\n",
                                     b"{f8615163-df3e-46c5-913f-f2d2f965ed0e}\n", b"0x0001\n"]))
PCI_FILES = ("class", "vendor", "device")
USB_DEVICE_FILES = ("idVendor", "idProduct", "product")
USB_INTERFACE_FILES = ("bInterfaceClass", "bInterfaceSubClass", "bInterfaceProtocol")


def _printable(text: str) -> bool:
    return text.isprintable()


def _write(base: bytes, files: dict[str, bytes], driver: bytes | None) -> None:
    os.makedirs(base, exist_ok=True)
    for name, data in files.items():
        with open(os.path.join(base, name.encode()), "wb") as f:
            f.write(data)
    if driver is not None:
        os.symlink(b"../drivers/" + driver, os.path.join(base, b"driver"))


@settings(max_examples=150, deadline=None)
@given(entries=st.lists(st.tuples(st.sampled_from(["pci", "usb", "vmbus", "virtio"]), NAME,
                                  st.lists(CONTENT, min_size=3, max_size=3),
                                  st.lists(CONTENT, min_size=3, max_size=3),
                                  st.one_of(st.none(), NAME)), max_size=6),
       pci_ids=st.one_of(st.none(), st.binary(max_size=2000),
                         st.text(max_size=500).map(lambda t: ("8086  X\n\t" + t).encode())),
       secure_boot=st.one_of(st.none(), st.binary(max_size=80)),
       net=st.lists(CONTENT, min_size=3, max_size=3))
def test_any_bytes_in_the_tree_raise_nothing_and_names_are_printable(entries, pci_ids,
                                                                     secure_boot, net):
    with tempfile.TemporaryDirectory() as t:
        root = t.encode()
        for bus, name, first, second, driver in entries:
            where = os.path.join(root, f"sys/bus/{bus}/devices".encode(), name)
            if os.path.exists(where) or os.path.exists(where + b":1.0"):
                continue
            if bus == "pci":
                files = dict(zip(PCI_FILES, first, strict=True))
            elif bus == "usb":
                files = dict(zip(USB_DEVICE_FILES, first, strict=True))
                _write(where + b":1.0", dict(zip(USB_INTERFACE_FILES, second, strict=True)),
                       driver)
            elif bus == "vmbus":
                files = {"class_id": first[0]}
            else:
                files = {"device": first[0]}
            _write(where, files, driver if bus != "usb" else None)
        if pci_ids is not None:
            os.makedirs(os.path.join(root, b"usr/share/misc"))
            with open(os.path.join(root, b"usr/share/misc/pci.ids"), "wb") as f:
                f.write(pci_ids)
        if secure_boot is not None:
            _write(os.path.dirname(os.path.join(root, sysfs.SECURE_BOOT.encode())),
                   {os.path.basename(sysfs.SECURE_BOOT): secure_boot}, None)
        _write(os.path.join(root, b"sys/class/net/eth0"),
               dict(zip(("flags", "operstate", "carrier"), net, strict=True)), None)

        found = read_devices(t)
        event(f"devices: {min(len(found), 2)}")
        for d in found:
            assert d.kind in (hw.NETWORK, hw.STORAGE)
            for text in (d.label, d.name, d.driver, d.address, d.module):
                assert _printable(text), text
            assert len(d.name) <= hw.NAME_MAX
        assert read_secure_boot(t) in (None, "on", "off", "unknown")
        assert _printable(read_link("eth0", t).operstate)


@settings(max_examples=300, deadline=None)
@given(text=st.text(max_size=3000), wanted=st.sets(st.from_regex(r"[0-9a-f]{4}:[0-9a-f]{4}",
                                                                 fullmatch=True), max_size=5))
def test_pci_ids_any_text_gives_printable_names_of_wanted_ids(text, wanted):
    names = hw.pci_ids_names(text, wanted)
    assert set(names) <= wanted
    assert all(_printable(n) and len(n) <= hw.NAME_MAX for n in names.values())


@settings(max_examples=300, deadline=None)
@given(address=st.text(max_size=50), texts=st.lists(st.one_of(st.none(), st.text(max_size=40)),
                                                    min_size=5, max_size=5),
       driver=st.text(max_size=40))
def test_the_parsers_any_text_gives_printable_names(address, texts, driver):
    made = [hw.pci_device(address, *texts[:3], driver, listed=texts[3]),
            hw.usb_device(address, texts[0], texts[1], texts[2],
                          [hw.UsbInterface(texts[3], texts[4], texts[0], driver)]),
            hw.vmbus_device(address, texts[0], driver),
            hw.virtio_device(address, texts[1], driver)]
    for d in made:
        if d is not None:
            assert all(_printable(s) for s in (d.label, d.name, d.driver, d.address))
    state = hw.link(*texts[:3])
    assert _printable(state.operstate)
