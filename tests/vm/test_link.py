"""Two guests on one lab link reach each other."""

from __future__ import annotations


def test_two_guests_on_a_link_ping_each_other(make_lab):
    lab = make_lab()
    a = lab.guest("a")
    b = lab.guest("b")
    lab.link("ab", a, b)
    lab.start()
    a.check(f"ip addr add 192.0.2.1/24 dev {a.ifname('ab')} && ip link set {a.ifname('ab')} up")
    b.check(f"ip addr add 192.0.2.2/24 dev {b.ifname('ab')} && ip link set {b.ifname('ab')} up")

    out = a.check("ping -c 3 -i 0.2 -W 5 192.0.2.2", timeout=60)
    assert "3 received" in out
    out = b.check("ping -c 3 -i 0.2 -W 5 192.0.2.1", timeout=60)
    assert "3 received" in out
