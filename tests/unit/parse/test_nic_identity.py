"""keel.parse.nic_identity: MACs, the ethtool permanent-address reply, where
a NIC sits from its /sys/class/net link, speeds, and a port from sysfs's
attributes; and whatever bytes come in, nothing raises and what comes out
is well formed."""

from __future__ import annotations

import re
import struct

from hypothesis import given
from hypothesis import strategies as st

from keel.parse import nic_identity as ni


def test_a_mac_is_six_pairs_in_lower_case_and_never_all_zeros():
    assert ni.mac("52:54:00:AB:cd:01\n") == "52:54:00:ab:cd:01"
    for bad in ("", "00:00:00:00:00:00", "52:54:00:ab:cd", "52-54-00-ab-cd-01",
                "52:54:00:ab:cd:0g", "52:54:00:ab:cd:01:02", None, "5" * 100):
        assert ni.mac(bad) is None


def test_the_ethtool_reply_gives_the_permanent_mac():
    reply = struct.pack("=II", ni.ETHTOOL_GPERMADDR, 6) + bytes.fromhex("00e04c680001") + bytes(26)
    assert ni.perm_addr(reply) == "00:e0:4c:68:00:01"
    assert ni.perm_addr(struct.pack("=II", ni.ETHTOOL_GPERMADDR, 0) + bytes(32)) is None
    assert ni.perm_addr(struct.pack("=II", ni.ETHTOOL_GPERMADDR, 6) + bytes(32)) is None
    assert ni.perm_addr(struct.pack("=II", 0x21, 6) + bytes.fromhex("00e04c680001")) is None
    assert ni.perm_addr(b"\x20\x00") is None


def test_pci_names_as_a_config_writes_them():
    assert ni.pci_name("0000:01:00.0") == "0000:01:00.0"
    assert ni.pci_name("01:00.0") == "0000:01:00.0"
    assert ni.pci_name("0000:1A:00.1") == "0000:1a:00.1"
    assert ni.pci_name("10000:01:00.0") == "10000:01:00.0"  # a VMD domain
    for bad in ("01:00.8", "1:00.0", "0000:01:00", "", "x"):
        assert ni.pci_name(bad) is None


def test_where_a_nic_sits():
    # captured on a KVM guest: virtio2 on the PCI function 00:03.0
    assert ni.placement("../../devices/pci0000:00/0000:00:03.0/virtio2/net/eth0") == \
        ni.Placement(False, "0000:00:03.0")
    assert ni.placement("../../devices/pci0000:00/0000:00:1c.0/0000:01:00.0/net/enp1s0") \
        .pci == "0000:01:00.0"
    usb = ni.placement("../../devices/pci0000:00/0000:00:14.0/usb2/2-1/2-1.4/2-1.4:1.0/net/x")
    assert (usb.pci, usb.usb) == ("", "2-1.4")  # the controller's function is not its own
    hv = ni.placement("../../devices/LNXSYSTM:00/LNXSYBUS:00/ACPI0004:00/VMBUS:00/"
                      "000d3a6e-5a4c-000d-3a6e-5a4c000d3a6e/net/eth0")
    assert hv.vmbus == "000d3a6e-5a4c-000d-3a6e-5a4c000d3a6e" and not hv.virtual
    assert ni.placement("../../devices/virtual/net/wg0").virtual
    assert ni.placement("").virtual and ni.placement("/etc/passwd").virtual


def test_speeds():
    assert ni.speed_mbps("2500\n") == 2500
    for bad in ("-1\n", "0", "", None, "\uff11\uff10\uff10\uff10", "99999999999"):
        assert ni.speed_mbps(bad) is None


def _port(**kw) -> ni.Port | None:
    args = dict(name="eth0", target="../../devices/pci0000:00/0000:00:05.0/net/eth0",
                type_text="1\n", address="52:54:00:00:05:01\n", assign_text="0\n",
                permanent=None, driver="e1000", flags_text="0x1003\n",
                operstate_text="up\n", carrier_text="1\n", speed_text="1000\n")
    return ni.port(**(args | kw))


def test_a_port_and_its_identity():
    p = _port()
    assert p is not None
    assert (p.identity, p.pci, p.driver, p.link) == (
        "mac:52:54:00:00:05:01", "0000:00:05.0", "e1000", "up 1000 Mbit/s")
    # a MAC someone set is not the device's: the ethtool reply's is, else the PCI function
    assert _port(assign_text="3\n").identity == "pci:0000:00:05.0"
    assert _port(assign_text="3\n", permanent="00:e0:4c:68:00:01").identity == \
        "mac:00:e0:4c:68:00:01"
    assert _port(flags_text="0x1002\n", carrier_text=None).link == "down"
    assert _port(carrier_text="0\n").link == "no carrier"
    assert _port(type_text="772\n") is None  # the loopback
    assert _port(target="../../devices/virtual/net/br0") is None


macs = st.one_of(st.text(max_size=30), st.lists(st.text("0123456789abcdefABCDEF:x",
                                                        max_size=3), max_size=8).map(":".join))


@given(st.one_of(st.none(), macs))
def test_mac_takes_any_text(text):
    found = ni.mac(text)
    assert found is None or re.fullmatch(r"([0-9a-f]{2}:){5}[0-9a-f]{2}", found)


@given(st.binary(max_size=64))
def test_perm_addr_takes_any_bytes(data):
    found = ni.perm_addr(data)
    assert found is None or ni.mac(found) == found


@given(st.text(max_size=200), st.one_of(st.none(), st.text(max_size=30)),
       st.one_of(st.none(), st.text(max_size=30)), st.one_of(st.none(), st.text(max_size=30)),
       st.one_of(st.none(), st.text(max_size=30)), st.one_of(st.none(), st.text(max_size=30)),
       st.one_of(st.none(), st.text(max_size=30)))
def test_port_takes_any_sysfs_text(target, kind, address, assign, flags, carrier, speed):
    p = ni.port("eth0", target, kind, address, assign, None, "drv", flags, "up", carrier, speed)
    if p is not None:
        assert p.name == "eth0" and p.link and p.link.isprintable()
        assert p.mac == "" or ni.mac(p.mac) == p.mac
        assert p.speed_mbps is None or 0 < p.speed_mbps <= ni.SPEED_MAX_MBPS
        assert p.identity == "" or p.identity.startswith(("mac:", "pci:"))
