"""A port set up or down by the SIOCGIFFLAGS/SIOCSIFFLAGS ioctls
(keel.system.nic_link), against a fake ioctl: no system touched."""

from __future__ import annotations

import struct

from keel.system import nic_link as n


class FakeIoctl:
    def __init__(self, flags: int, fail: bool = False) -> None:
        self.flags, self.fail = flags, fail
        self.calls: list[tuple[int, str, int]] = []

    def __call__(self, fd: int, request: int, arg: bytes) -> bytes:
        name, flags = struct.unpack(n.IFREQ, arg)
        self.calls.append((request, name.rstrip(b"\0").decode(), flags))
        if self.fail:
            raise PermissionError(1, "Operation not permitted")
        if request == n.SIOCSIFFLAGS:
            self.flags = flags
        return struct.pack(n.IFREQ, name, self.flags)


def conf(tmp_path, *names: str):
    for name in names:
        (tmp_path / name).mkdir()
        (tmp_path / name / "disable_ipv6").write_text("0\n")
    return tmp_path


def test_a_port_set_up_keeps_its_other_flags_and_sends_no_ipv6_until_down(tmp_path):
    knobs = conf(tmp_path, "enp2s0")
    fake = FakeIoctl(0x1002)  # BROADCAST, down
    assert n.set_up("enp2s0", True, fake, knobs)
    assert fake.calls == [(n.SIOCGIFFLAGS, "enp2s0", 0), (n.SIOCSIFFLAGS, "enp2s0", 0x1003)]
    assert (knobs / "enp2s0/disable_ipv6").read_text() == "1\n"
    assert n.set_up("enp2s0", False, fake, knobs) and fake.flags == 0x1002
    assert (knobs / "enp2s0/disable_ipv6").read_text() == "0\n"


def test_a_port_already_so_is_left_alone(tmp_path):
    knobs = conf(tmp_path, "eth0")
    fake = FakeIoctl(0x1003)
    assert n.set_up("eth0", True, fake, knobs)
    assert [c[0] for c in fake.calls] == [n.SIOCGIFFLAGS]
    assert (knobs / "eth0/disable_ipv6").read_text() == "0\n"  # keel's port: untouched


def test_what_cannot_be_set_is_false():
    assert not n.set_up("eth0", True, FakeIoctl(0, fail=True))
    fake = FakeIoctl(0)
    assert not n.set_up("", True, fake) and not n.set_up("x" * 16, True, fake)
    assert not n.set_up("a/b", True, fake) and not n.set_up("..", True, fake)
    assert fake.calls == []
