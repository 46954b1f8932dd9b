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
from keel.system.wireguard import read_wireguard
from keel.wireguard.peers import NoPeer, choose_peer


def probe_targets(source: Source) -> tuple[str | None, str | None]:
    """(address through the tunnel, the peer's public address) of the peer the
    self-tests would load (keel.wireguard.peers, the one chooser)."""
    try:
        peer = choose_peer(read_wireguard(source))
    except (SourceError, NoPeer):
        return None, None
    return peer.tunnel_ip, peer.public_ip


def real_collectors(source: Source | None = None) -> dict[str, Any]:
    source = source or RealSource()
    inner, outer = probe_targets(source)
    probes: list[Probe] = []
    if inner:
        probes.append(PingProbe("tunnel", inner))
    if outer:
        probes.append(PingProbe("outside", outer))
    collectors: dict[str, Any] = {
        "tunnel": TunnelCollector(source), "cpu": CpuCollector(source),
        "cake": CakeCollector(source), "tuning": TuningCollector(source),
        "latency": LatencyCollector(probes)}
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
