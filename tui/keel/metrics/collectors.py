"""Collectors: each reads its Source and returns an immutable snapshot.

A collector keeps the previous read to compute rates, so one poll of a
collector must be in flight at a time (the UI guarantees that). Errors of the
source become the snapshot's `error`, never an exception.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from dataclasses import astuple
from typing import Any

from keel.metrics.cpucost import cpu_warnings, tunnel_cost
from keel.metrics.remembered import remembered
from keel.metrics.snapshots import (
    CakeAdaptive,
    CakeDirection,
    CakeSnapshot,
    CoreStat,
    CpuSnapshot,
    InterfaceStat,
    PeerStat,
    TinStat,
    TuningSnapshot,
    TunnelSnapshot,
)
from keel.parse.kworkers import KworkerReading, crypt_ticks_between
from keel.parse.procstat import CpuShare, shares
from keel.system.adaptive import read_state as read_adapt_state
from keel.system.cpu_sysfs import cpuinfo_mhz, read_tuning
from keel.system.cpu_times import read_cpu_times
from keel.system.kworkers import HZ, read_kworkers
from keel.system.links import Counters, read_counters, wireguard_interfaces
from keel.system.pm_qos import read_pm_qos
from keel.system.qdiscs import read_qdiscs
from keel.system.source import Source, SourceError
from keel.system.wireguard import read_wireguard


def _rate(now: int, before: int | None, seconds: float) -> float | None:
    if before is None or seconds <= 0:
        return None
    return max(0, now - before) / seconds




class TunnelCollector:
    """`wg show all dump`: peers, handshake ages and per-peer rates; packets/s
    per interface from /sys/class/net (wg keeps no per-peer packet count)."""

    last: Any = None  # the latest snapshot (see remembered)

    RATE_HISTORY = 120  # polls of rates kept for the sparklines (2 min at 1 Hz)

    def __init__(self, source: Source, clock: Callable[[], float] = time.monotonic,
                 wallclock: Callable[[], float] = time.time) -> None:
        self.source, self.clock, self.wallclock = source, clock, wallclock
        self._prev_t: float | None = None
        self._prev: dict[tuple[str, str], tuple[int, int]] = {}
        self._prev_if: dict[str, Counters | None] = {}
        self._rx_history: deque[float] = deque(maxlen=self.RATE_HISTORY)
        self._tx_history: deque[float] = deque(maxlen=self.RATE_HISTORY)

    @remembered
    def poll(self) -> TunnelSnapshot:
        try:
            interfaces = read_wireguard(self.source)
        except SourceError as exc:
            return TunnelSnapshot(error=f"wg: {exc}")
        t, now = self.clock(), self.wallclock()
        dt = t - self._prev_t if self._prev_t is not None else 0.0
        peers, ifaces, prev, prev_if = [], [], {}, {}
        for iface in interfaces.values():
            counters = read_counters(iface.name, self.source)
            before = self._prev_if.get(iface.name)
            rates = ([_rate(c, b, dt) for c, b in zip(
                         astuple(counters), astuple(before) if before else (None,) * 4,
                         strict=True)]
                     if counters is not None else [None] * 4)
            prev_if[iface.name] = counters
            ifaces.append(InterfaceStat(
                iface.name, iface.listen_port,
                rates[0] * 8 if rates[0] is not None else None,
                rates[1] * 8 if rates[1] is not None else None, rates[2], rates[3]))
            for peer in iface.peers:
                key = (iface.name, peer.public_key)
                old = self._prev.get(key)
                rx = _rate(peer.rx_bytes, old[0] if old else None, dt)
                tx = _rate(peer.tx_bytes, old[1] if old else None, dt)
                prev[key] = (peer.rx_bytes, peer.tx_bytes)
                peers.append(PeerStat(
                    interface=iface.name, public_key=peer.public_key, endpoint=peer.endpoint,
                    allowed_ips=peer.allowed_ips, handshake_age=peer.handshake_age(now),
                    rx_bps=None if rx is None else rx * 8, tx_bps=None if tx is None else tx * 8))
        self._prev_t, self._prev, self._prev_if = t, prev, prev_if
        rx = [i.rx_bps for i in ifaces]
        tx = [i.tx_bps for i in ifaces]
        if ifaces and None not in rx and None not in tx:
            self._rx_history.append(sum(rx))  # type: ignore[arg-type]
            self._tx_history.append(sum(tx))  # type: ignore[arg-type]
        return TunnelSnapshot(tuple(ifaces), tuple(peers), rx_history=tuple(self._rx_history),
                              tx_history=tuple(self._tx_history))


class CpuCollector:
    """/proc/stat per core, the wg-crypt kworkers' ticks and the bytes through
    the wg interfaces: the tunnel's CPU cost and the CPU warnings. The kernel's
    workers are read whole each poll and counted by the one rule
    (keel.parse.kworkers.crypt_ticks_between), as the throughput self-test does."""

    last: Any = None  # the latest snapshot (see remembered)

    RESCAN_WG_EVERY = 30  # polls between looks for new WireGuard interfaces

    def __init__(self, source: Source, hz: int | None = None, hold: int = 3) -> None:
        self.source = source
        self.hz = hz or HZ
        self.hold = hold
        self._stat = None
        self._workers: KworkerReading | None = None
        self._polls = 0
        self._wg: list[str] | None = None
        self._bytes: int | None = None
        self._history: deque[dict[str, CpuShare]] = deque(maxlen=hold)

    def _tunnel_bytes(self) -> int | None:
        if self._wg is None or self._polls % self.RESCAN_WG_EVERY == 0:
            self._wg = wireguard_interfaces(self.source)
        if not self._wg:
            return None
        total = 0
        for dev in self._wg:
            counters = read_counters(dev, self.source)
            if counters is None:
                return None
            total += counters.rx_bytes + counters.tx_bytes
        return total

    @remembered
    def poll(self) -> CpuSnapshot:
        try:
            stat = read_cpu_times(self.source)
        except SourceError as exc:
            return CpuSnapshot(error=f"/proc/stat: {exc}")
        workers = read_kworkers(self.source, self.hz)
        nbytes = self._tunnel_bytes()
        self._polls += 1
        before, self._stat = self._stat, stat
        old_workers, self._workers = self._workers, workers
        old_bytes, self._bytes = self._bytes, nbytes
        if before is None or old_workers is None:
            return CpuSnapshot()
        crypt = crypt_ticks_between(old_workers, workers)
        share = shares(before, stat)
        self._history.append(share)
        delta = None if nbytes is None or old_bytes is None else nbytes - old_bytes

        def core(s: CpuShare) -> CoreStat:
            return CoreStat(s.cpu, s.user, s.system, s.softirq, s.steal, s.idle)

        cores = tuple(core(s) for name, s in share.items() if name != "cpu")
        return CpuSnapshot(
            cores=cores,
            total=core(share["cpu"]) if "cpu" in share else None,
            cost=tunnel_cost(before, stat, crypt, delta, self.hz),
            warnings=cpu_warnings(self._history, self.hold),
            steal_reported="cpu" in stat and stat["cpu"].steal > 0,
        )


def _direction(q) -> str:
    return "ingress" if q.options.get("ingress") or q.dev.startswith("ifb") else "egress"


class CakeCollector:
    """`tc -s -j qdisc show`: every root CAKE, egress and ingress (IFB); and
    adaptive CAKE's state (/run/keel/adapt.json, keel.system.adaptive): the
    bounds of each direction its daemon moves. Each direction's rate (tc's:
    where CAKE is now) and throughput are kept for the last HISTORY polls."""

    last: Any = None  # the latest snapshot (see remembered)

    HISTORY = 180  # polls kept for the sparklines (3 min at 1 Hz)

    def __init__(self, source: Source, clock: Callable[[], float] = time.monotonic,
                 wallclock: Callable[[], float] = time.time) -> None:
        self.source, self.clock, self.wallclock = source, clock, wallclock
        self._prev: dict[str, int] = {}
        self._prev_t: float | None = None
        self._rates: dict[str, deque[float]] = {}
        self._through: dict[str, deque[float]] = {}

    def _history(self, dev: str, rate_bps: int | None,
                 through_bps: float | None) -> tuple[tuple[float, ...], tuple[float, ...]]:
        rates = self._rates.setdefault(dev, deque(maxlen=self.HISTORY))
        through = self._through.setdefault(dev, deque(maxlen=self.HISTORY))
        if through_bps is not None:  # the two side by side: one sample each a poll
            rates.append(float(rate_bps or 0))
            through.append(through_bps)
        return tuple(rates), tuple(through)

    @remembered
    def poll(self) -> CakeSnapshot:
        try:
            qdiscs = read_qdiscs(self.source)
        except SourceError as exc:
            return CakeSnapshot(error=f"tc: {exc}")
        t = self.clock()
        dt = t - self._prev_t if self._prev_t is not None else 0.0
        state = read_adapt_state(self.source, self.wallclock())
        adapted = {w.dev: w for w in (state.up, state.down) if w is not None} if state else {}
        dirs, prev = [], {}
        for q in qdiscs:
            if not (q.root and q.is_cake):
                continue
            rate = _rate(q.bytes, self._prev.get(q.dev), dt)
            prev[q.dev] = q.bytes
            through = None if rate is None else rate * 8
            way = adapted.get(q.dev)
            rates, throughs = self._history(q.dev, q.bandwidth_bps, through)
            dirs.append(CakeDirection(
                direction=_direction(q), dev=q.dev, rate_bps=q.bandwidth_bps,
                throughput_bps=through,
                backlog_bytes=q.backlog, drops=q.drops, ecn_marks=q.ecn_marks,
                tins=tuple(TinStat(tin.name, tin.peak_delay_us / 1000, tin.avg_delay_us / 1000,
                                   tin.drops, tin.ecn_marks, tin.backlog_bytes, tin.sent_packets)
                           for tin in q.tins),
                adaptive=None if way is None else CakeAdaptive(
                    way.min_kbit * 1000, way.base_kbit * 1000, way.max_kbit * 1000),
                rate_history=rates, throughput_history=throughs, sent_bytes=q.bytes))
        dirs.sort(key=lambda d: (d.direction != "egress", d.dev))
        self._prev, self._prev_t = prev, t
        for gone in set(self._rates) - set(prev):  # a CAKE removed: its history goes too
            del self._rates[gone], self._through[gone]
        return CakeSnapshot(tuple(dirs),
                            peer_silent_s=state.peer_silent_s if adapted and state else None)


class TuningCollector:
    """Governor, clock vs max, idle states, PM QoS; or "managed by the hypervisor"."""

    last: Any = None  # the latest snapshot (see remembered)

    def __init__(self, source: Source,
                 pm_qos: Callable[[], int | None] = read_pm_qos) -> None:
        self.source, self.pm_qos = source, pm_qos

    @remembered
    def poll(self) -> TuningSnapshot:
        tuning = read_tuning(self.source, pm_qos=self.pm_qos)
        freq, driver, states = tuning.freq, tuning.idle_driver, tuning.idle_states
        pm_qos = tuning.pm_qos_us
        has_idle = tuning.has_cpuidle
        cpu0 = [s for s in states if s.cpu == min(st.cpu for st in states)] if states else []
        allowed = tuple(s.name for s in cpu0
                        if not s.disabled and (pm_qos is None or s.latency_us <= pm_qos))
        disabled = tuple(s.name for s in cpu0 if s.name not in allowed)
        if freq:
            cur = sum(f.cur_khz for f in freq.values()) / len(freq) / 1000
            mx = max(f.max_khz for f in freq.values()) / 1000
            source = "cpufreq"
        else:
            cur, mx, source = cpuinfo_mhz(self.source), None, "cpuinfo"
        return TuningSnapshot(
            governors=tuple(sorted({f.governor for f in freq.values()})),
            cur_mhz=cur, max_mhz=mx, mhz_source=source, idle_driver=driver,
            idle_allowed=allowed if has_idle else (), idle_disabled=disabled if has_idle else (),
            idle_exit_us=tuple((st.name, st.latency_us) for st in cpu0
                               if st.name in allowed) if has_idle else (),
            pm_qos_us=pm_qos, managed_by_hypervisor=not freq and not has_idle)
