"""The collectors of a live router (or of the fake one): one set, shared by the
console UI and `keel doctor --watch`."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from keel.metrics.collectors import CakeCollector, CpuCollector, TuningCollector, TunnelCollector
from keel.metrics.latency import FakeProbe, LatencyCollector, PingProbe, Probe
from keel.metrics.verdict import VerdictCollector
from keel.system.source import RealSource, Source, SourceError
from keel.wireguard.peers import NoPeer, TunnelPeer
from keel.wireguard.target import read_probe_peer


def probe_peer(source: Source) -> TunnelPeer | None:
    """The peer the self-tests would load (keel.wireguard.peers, the one
    chooser), or None: its tunnel address and where to reach it outside."""
    try:
        return read_probe_peer(source)
    except (SourceError, NoPeer):
        return None


def latency_probes(peer: TunnelPeer | None) -> list[Probe]:
    """A ping through the tunnel, and one outside it (with the tunnel's
    fwmark: by the WAN) when the peer has an address there to probe."""
    if peer is None:
        return []
    probes: list[Probe] = [PingProbe("tunnel", peer.tunnel_ip)]
    if peer.public_ip:
        probes.append(PingProbe("outside", peer.public_ip, mark=peer.fwmark))
    return probes


def real_collectors(source: Source | None = None) -> dict[str, Any]:
    source = source or RealSource()
    collectors: dict[str, Any] = {
        "tunnel": TunnelCollector(source), "cpu": CpuCollector(source),
        "cake": CakeCollector(source), "tuning": TuningCollector(source),
        "latency": LatencyCollector(latency_probes(probe_peer(source)))}
    collectors["verdict"] = VerdictCollector(collectors, source)
    return collectors


def fake_collectors(clock: Callable[[], float] = time.monotonic,
                    wallclock: Callable[[], float] = time.time,
                    cpufreq: bool = False, adaptive: bool = False) -> dict[str, Any]:
    """Live-looking data without a router (benchmark, development); with
    `adaptive`, adaptive CAKE's daemon moving both rates."""
    from keel.system.fake import FakeLiveSource

    source = FakeLiveSource(clock, wallclock, cpufreq=cpufreq, adaptive=adaptive)
    probes = [FakeProbe("tunnel", "10.99.0.2", base_ms=4.8, load_ms=40, loss_every=97),
              FakeProbe("outside", "192.0.2.2", base_ms=3.1, load_ms=8)]
    collectors: dict[str, Any] = {
        "tunnel": TunnelCollector(source, clock, wallclock),
        "cpu": CpuCollector(source, hz=100),
        "cake": CakeCollector(source, clock, wallclock),
        "tuning": TuningCollector(source, lambda: 0),
        "latency": LatencyCollector(probes, wallclock)}
    collectors["verdict"] = VerdictCollector(collectors, source, stall=source.stall,
                                             wallclock=wallclock)
    return collectors
