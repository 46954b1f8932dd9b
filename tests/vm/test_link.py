"""Two guests on one lab link reach each other."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.lab("image")


def test_two_guests_on_a_link_ping_each_other(shared_lab):
    a, b = shared_lab.uefi, shared_lab.bios
    a.check(f"ip addr add 192.0.2.1/24 dev {a.ifname('wire')} && "
            f"ip link set {a.ifname('wire')} up")
    b.check(f"ip addr add 192.0.2.2/24 dev {b.ifname('wire')} && "
            f"ip link set {b.ifname('wire')} up")

    out = a.check("ping -c 3 -i 0.2 -w 30 192.0.2.2", timeout=60)
    assert "3 received" in out
    out = b.check("ping -c 3 -i 0.2 -w 30 192.0.2.1", timeout=60)
    assert "3 received" in out
