"""The MTU self-test to an IPv6 peer: the path outside the tunnel probed at
the peer's endpoint with the tunnel's fwmark, the tunnel's at its IPv6
tunnel address; no endpoint to reach, no path outside."""

from __future__ import annotations

import pytest

from keel.selftest import mtu
from keel.wireguard.peers import TunnelPeer


@pytest.fixture(autouse=True)
def interface_mtus(monkeypatch):
    monkeypatch.setattr(mtu, "read_mtu", {"eth0": 1500, "wg0": 1420}.get)


def network(limits: dict[str, int], asked: list[tuple[str, int, int | None]]):
    def probe(addr: str, size: int, mark: int | None) -> bool:
        asked.append((addr, size, mark))
        return size <= limits[addr]
    return probe


def test_an_ipv6_peer_inside_and_outside():
    asked: list[tuple[str, int, int | None]] = []
    peer = TunnelPeer("wg0", "fd00:77::2", "2001:db8::1", 51820)
    got = mtu.run_mtu(peer, "eth0", probe=network({"2001:db8::1": 1480, "fd00:77::2": 1400},
                                                  asked))
    assert (got.wan_path_mtu, got.tunnel_path_mtu, got.recommended_tunnel_mtu) == (1480, 1400,
                                                                                   1400)
    assert {(a, m) for a, _, m in asked} == {("2001:db8::1", 51820), ("fd00:77::2", None)}


def test_no_address_outside_no_path_outside():
    asked: list[tuple[str, int, int | None]] = []
    got = mtu.run_mtu(TunnelPeer("wg0", "fd00:77::2", None), None,
                      probe=network({"fd00:77::2": 1420}, asked))
    assert got.wan_path_mtu is None and got.recommended_tunnel_mtu is None
    assert got.tunnel_path_mtu == 1420 and {a for a, _, _ in asked} == {"fd00:77::2"}
