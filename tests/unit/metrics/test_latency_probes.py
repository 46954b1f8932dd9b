"""The dashboard's latency probes: through the tunnel to the chosen peer's
tunnel address (IPv4 or IPv6), outside it to its endpoint with the tunnel's
fwmark; none without a peer."""

from __future__ import annotations

from keel.metrics.latency import PingProbe
from keel.metrics.live import latency_probes, probe_peer
from keel.system.source import FixtureSource
from keel.system.wireguard import WG_DUMP
from keel.wireguard.peers import TunnelPeer
from tests.fixtures.sources import lab


def argv(probe) -> list[str]:
    assert isinstance(probe, PingProbe)
    return probe.process.argv


def test_probes_to_an_ipv6_peer():
    tunnel, outside = latency_probes(TunnelPeer("wg0", "fd00:77::2", "2001:db8::1", 51820))
    assert (tunnel.name, tunnel.target) == ("tunnel", "fd00:77::2")
    assert argv(tunnel)[:2] == ["ping", "-6"] and "-m" not in argv(tunnel)
    assert (outside.name, outside.target) == ("outside", "2001:db8::1")
    assert argv(outside)[-3:] == ["-m", "51820", "2001:db8::1"]


def test_no_address_outside_no_probe_there():
    (tunnel,) = latency_probes(TunnelPeer("wg0", "10.99.0.2", None))
    assert argv(tunnel) == ["ping", "-D", "-O", "-n", "-i", "0.2", "10.99.0.2"]
    assert latency_probes(None) == []


def test_the_lab_routers_peer():
    """The lab's capture: wg's dump, no ip listings (ip cannot tell: any
    single address, an IPv4 endpoint as before)."""
    source = FixtureSource(commands={WG_DUMP: lab("wg-show-all-dump.txt")})
    assert probe_peer(source) == TunnelPeer("wg0", "10.99.0.2", "192.0.2.2")
    assert probe_peer(FixtureSource()) is None  # no tunnel
