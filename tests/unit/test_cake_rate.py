"""CAKE's rate over rtnetlink (keel.system.cake_rate): the request's bytes,
and the kernel's answers read on this host's real kernel in a network
namespace made for the test (the host has no sch_cake: a device with
another qdisc gets the refusal the code must report; CAKE itself is changed
in the adaptive lab)."""

from __future__ import annotations

import errno
import struct
import subprocess
import sys
import textwrap

import pytest

from keel.system.cake_rate import MAX_KBIT, ack_error, message


def test_the_request_sets_the_root_cakes_base_rate() -> None:
    msg = message(ifindex=3, kbit=1500, seq=9)
    length, kind, flags, seq, pid = struct.unpack("=IHHII", msg[:16])
    assert (length, kind, flags, seq, pid) == (len(msg), 36, 0x5, 9, 0)
    family, _, ifindex, handle, parent, info = struct.unpack("=BxHiIII", msg[16:36])
    assert (family, ifindex, handle, parent, info) == (0, 3, 0, 0xFFFFFFFF, 0)
    assert msg[36:48] == struct.pack("=HH", 9, 1) + b"cake\0\0\0\0"  # TCA_KIND, padded
    assert struct.unpack("=HH", msg[48:52]) == (16, 2 | 0x8000)  # TCA_OPTIONS, nested
    assert struct.unpack("=HHQ", msg[52:64]) == (12, 2, 1500 * 1000 // 8)  # BASE_RATE64


@pytest.mark.parametrize("kbit", [0, -1, MAX_KBIT + 1])
def test_rates_out_of_range_are_refused(kbit: int) -> None:
    with pytest.raises(ValueError, match="a CAKE rate of 1"):
        message(1, kbit)


def test_an_ack_is_read_and_others_skipped() -> None:
    other = struct.pack("=IHHII", 20, 2, 0, 3, 0) + struct.pack("=i", -1)
    mine = struct.pack("=IHHII", 36, 2, 0, 4, 0) + struct.pack("=i", -errno.EINVAL) + b"\0" * 16
    assert ack_error(other + mine, 4) == errno.EINVAL
    assert ack_error(struct.pack("=IHHII", 20, 2, 0, 4, 0) + b"\0" * 4, 4) == 0


def in_netns(code: str) -> subprocess.CompletedProcess:
    return subprocess.run(["unshare", "--net", sys.executable, "-c", textwrap.dedent(code)],
                          capture_output=True, text=True, timeout=60, check=False,
                          env={"PYTHONPATH": "tui", "PATH": "/usr/sbin:/usr/bin:/sbin:/bin"})


def test_the_kernel_refuses_a_device_without_cake() -> None:
    """lo with no qdisc of its own, and a veth whose root is pfifo, not
    CAKE: ENOENT (a change never creates, nor changes a qdisc's kind); a
    missing device: ENODEV."""
    proc = in_netns("""
        import subprocess
        from keel.system.cake_rate import CakeRates, CakeRateError
        subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
        rates = CakeRates()
        for dev, setup in (("lo", None), ("d0", "pfifo"), ("nope", None)):
            if setup:
                subprocess.run(["ip", "link", "add", dev, "type", "veth", "peer", "name", "p0"],
                               check=True)
                subprocess.run(["tc", "qdisc", "add", "dev", dev, "root", "handle", "1:",
                                setup], check=True)
            try:
                rates.set(dev, 1000)
                print(dev, "changed")
            except CakeRateError as err:
                print(dev, err.errno, err.strerror)
        """)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].startswith(f"lo {errno.ENOENT} lo: CAKE rate 1000 kbit/s")
    assert lines[1].startswith(f"d0 {errno.ENOENT} d0: CAKE rate 1000 kbit/s")
    assert lines[2] == f"nope {errno.ENODEV} nope: no such device"
