"""Two guests on one lab link reach each other: the image lab's SCSI and IDE
machines, on a link no other test configures (e1000 to rtl8139)."""

from __future__ import annotations

import pytest

from keel.parse.ping import parse_ping

pytestmark = pytest.mark.lab("image")


def test_two_guests_on_a_link_ping_each_other(shared_lab):
    a, b = shared_lab["scsi"], shared_lab["ide"]
    a.check(f"ip addr add 192.0.2.1/24 dev {a.ifname('x2')} && "
            f"ip link set {a.ifname('x2')} up")
    b.check(f"ip addr add 192.0.2.2/24 dev {b.ifname('x2')} && "
            f"ip link set {b.ifname('x2')} up")

    for guest, peer in ((a, "192.0.2.2"), (b, "192.0.2.1")):
        out = guest.check(f"ping -D -n -c 3 -i 0.2 -w 30 {peer}", timeout=60)
        assert len(replied(out)) >= 3, out


def replied(out: str) -> set[int]:
    """The probes answered. With -c 3 -w 30, ping sends until 3 replies came
    (its exit code, which check() asserts, says they did): on a starved host
    an emulated NIC may drop one frame of a burst, and ping sends another."""
    return {s.seq for s in parse_ping(out) if not s.lost}
