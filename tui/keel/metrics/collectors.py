"""Collectors: each reads its Source and returns an immutable snapshot.

A collector keeps the previous read to compute rates, so one poll of a
collector must be in flight at a time (the UI guarantees that). Errors of the
source become the snapshot's `error`, never an exception.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections import deque
from collections.abc import Callable, Sequence

from keel.metrics.cpucost import cpu_warnings, tunnel_cost
from keel.metrics.snapshots import (
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
from keel.metrics.source import Source, SourceError
from keel.parse.cpusysfs import parse_cpufreq, parse_cpuidle
from keel.parse.kworkers import TaskTime, crypt_ticks_between, parse_pid_stat
from keel.parse.procstat import CpuShare, parse_proc_stat, shares
from keel.parse.tcqdisc import parse_qdiscs
from keel.parse.wgdump import parse_wg_dump

WG_DUMP = ("wg", "show", "all", "dump")
TC_QDISC = ("tc", "-s", "-j", "qdisc", "show")
NET = "/sys/class/net"
CPU_SYSFS = "/sys/devices/system/cpu"


def _rate(now: int, before: int | None, seconds: float) -> float | None:
    if before is None or seconds <= 0:
        return None
    return max(0, now - before) / seconds


def wireguard_interfaces(source: Source) -> list[str]:
    """Interfaces whose uevent says DEVTYPE=wireguard."""
    found = []
    try:
        names = source.listdir(NET)
    except SourceError:
        return []
    for name in sorted(names):
        try:
            if "DEVTYPE=wireguard" in source.read_text(f"{NET}/{name}/uevent"):
                found.append(name)
        except SourceError:
            continue
    return found


def _counter(source: Source, dev: str, name: str) -> int | None:
    try:
        return int(source.read_text(f"{NET}/{dev}/statistics/{name}").strip())
    except (SourceError, ValueError):
        return None


class TunnelCollector:
    """`wg show all dump`: peers, handshake ages and per-peer rates; packets/s
    per interface from /sys/class/net (wg keeps no per-peer packet count)."""

    def __init__(self, source: Source, clock: Callable[[], float] = time.monotonic,
                 wallclock: Callable[[], float] = time.time) -> None:
        self.source, self.clock, self.wallclock = source, clock, wallclock
        self._prev_t: float | None = None
        self._prev: dict[tuple[str, str], tuple[int, int]] = {}
        self._prev_if: dict[str, tuple[int | None, ...]] = {}

    def poll(self) -> TunnelSnapshot:
        try:
            interfaces = parse_wg_dump(self.source.run(WG_DUMP))
        except (SourceError, ValueError) as exc:
            return TunnelSnapshot(error=f"wg: {exc}")
        t, now = self.clock(), self.wallclock()
        dt = t - self._prev_t if self._prev_t is not None else 0.0
        peers, ifaces, prev, prev_if = [], [], {}, {}
        for iface in interfaces.values():
            counters = tuple(_counter(self.source, iface.name, n) for n in
                             ("rx_bytes", "tx_bytes", "rx_packets", "tx_packets"))
            before = self._prev_if.get(iface.name, (None,) * 4)
            rates = [_rate(c, b, dt) if c is not None else None
                     for c, b in zip(counters, before, strict=True)]
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
        return TunnelSnapshot(tuple(ifaces), tuple(peers))


def scan_kworkers(source: Source) -> list[str]:
    """The pids of the kernel's workers (kworker/...)."""
    pids = []
    for pid in source.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            comm = source.read_text(f"/proc/{pid}/comm")
        except SourceError:
            continue
        if comm.startswith("kworker/"):
            pids.append(pid)
    return pids


def read_tasks(source: Source, pids: list[str]) -> dict[int, TaskTime]:
    """CPU time of these tasks, by pid (a task gone since is left out)."""
    tasks = {}
    for pid in pids:
        try:
            task = parse_pid_stat(source.read_text(f"/proc/{pid}/stat"))
        except (SourceError, ValueError):
            continue
        tasks[task.pid] = task
    return tasks


class CpuCollector:
    """/proc/stat per core, the wg-crypt kworkers' ticks and the bytes through
    the wg interfaces: the tunnel's CPU cost and the CPU warnings."""

    RESCAN_EVERY = 10  # polls between full scans of /proc for kworkers

    def __init__(self, source: Source, hz: int | None = None, hold: int = 3) -> None:
        self.source = source
        self.hz = hz or os.sysconf("SC_CLK_TCK")
        self.hold = hold
        self._stat = None
        self._tasks: dict[int, TaskTime] = {}
        self._kworkers: list[str] = []
        self._polls = 0
        self._wg: list[str] | None = None
        self._bytes: int | None = None
        self._history: deque[dict[str, CpuShare]] = deque(maxlen=hold)

    def _read_tasks(self) -> dict[int, TaskTime]:
        if self._polls % self.RESCAN_EVERY == 0:
            try:
                self._kworkers = scan_kworkers(self.source)
            except SourceError:
                self._kworkers = []
        return read_tasks(self.source, self._kworkers)

    def _tunnel_bytes(self) -> int | None:
        if self._wg is None or self._polls % (self.RESCAN_EVERY * 3) == 0:
            self._wg = wireguard_interfaces(self.source)
        if not self._wg:
            return None
        total = 0
        for dev in self._wg:
            for name in ("rx_bytes", "tx_bytes"):
                value = _counter(self.source, dev, name)
                if value is None:
                    return None
                total += value
        return total

    def poll(self) -> CpuSnapshot:
        try:
            stat = parse_proc_stat(self.source.read_text("/proc/stat"))
        except SourceError as exc:
            return CpuSnapshot(error=f"/proc/stat: {exc}")
        tasks = self._read_tasks()
        nbytes = self._tunnel_bytes()
        self._polls += 1
        before, self._stat = self._stat, stat
        old_tasks, self._tasks = self._tasks, tasks
        old_bytes, self._bytes = self._bytes, nbytes
        if before is None:
            return CpuSnapshot()
        # only workers seen at both reads: a rescan finds old workers, not new ones
        crypt = crypt_ticks_between(old_tasks, {p: t for p, t in tasks.items() if p in old_tasks})
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
        )


def _direction(q) -> str:
    return "ingress" if q.options.get("ingress") or q.dev.startswith("ifb") else "egress"


class CakeCollector:
    """`tc -s -j qdisc show`: every root CAKE, egress and ingress (IFB)."""

    def __init__(self, source: Source, clock: Callable[[], float] = time.monotonic) -> None:
        self.source, self.clock = source, clock
        self._prev: dict[str, int] = {}
        self._prev_t: float | None = None

    def poll(self) -> CakeSnapshot:
        try:
            qdiscs = parse_qdiscs(json.loads(self.source.run(TC_QDISC)))
        except (SourceError, ValueError) as exc:
            return CakeSnapshot(error=f"tc: {exc}")
        t = self.clock()
        dt = t - self._prev_t if self._prev_t is not None else 0.0
        dirs, prev = [], {}
        for q in qdiscs:
            if not (q.root and q.is_cake):
                continue
            rate = _rate(q.bytes, self._prev.get(q.dev), dt)
            prev[q.dev] = q.bytes
            dirs.append(CakeDirection(
                direction=_direction(q), dev=q.dev, rate_bps=q.bandwidth_bps,
                throughput_bps=None if rate is None else rate * 8,
                backlog_bytes=q.backlog, drops=q.drops, ecn_marks=q.ecn_marks,
                tins=tuple(TinStat(tin.name, tin.peak_delay_us / 1000, tin.avg_delay_us / 1000,
                                   tin.drops, tin.ecn_marks, tin.backlog_bytes, tin.sent_packets)
                           for tin in q.tins)))
        dirs.sort(key=lambda d: (d.direction != "egress", d.dev))
        self._prev, self._prev_t = prev, t
        return CakeSnapshot(tuple(dirs))


FREQ_FILES = ("scaling_governor", "scaling_cur_freq", "scaling_max_freq", "scaling_min_freq")
IDLE_FILES = ("name", "latency", "usage", "time", "disable")


def cpu_sysfs_text(source: Source, root: str = CPU_SYSFS) -> str:
    """cpufreq/cpuidle as `path=value` lines (what keel.parse.cpusysfs reads)."""
    lines = []

    def add(path: str) -> None:
        with contextlib.suppress(SourceError):
            lines.append(f"{path}={source.read_text(path).strip()}")

    add(f"{root}/cpuidle/current_driver")
    try:
        cpus = sorted((n for n in source.listdir(root) if n[3:].isdigit() and n[:3] == "cpu"),
                      key=lambda n: int(n[3:]))
    except SourceError:
        cpus = []
    for cpu in cpus:
        for name in FREQ_FILES:
            add(f"{root}/{cpu}/cpufreq/{name}")
        try:
            states = sorted(s for s in source.listdir(f"{root}/{cpu}/cpuidle")
                            if s.startswith("state"))
        except SourceError:
            states = []
        for state in states:
            for name in IDLE_FILES:
                add(f"{root}/{cpu}/cpuidle/{state}/{name}")
    return "\n".join(lines) + "\n"


def read_pm_qos_default() -> int | None:
    from keel.tuning.cpu import read_pm_qos
    return read_pm_qos()


class TuningCollector:
    """Governor, clock vs max, idle states, PM QoS; or "managed by the hypervisor"."""

    def __init__(self, source: Source,
                 pm_qos: Callable[[], int | None] = read_pm_qos_default) -> None:
        self.source, self.pm_qos = source, pm_qos

    def _cpuinfo_mhz(self) -> float | None:
        try:
            text = self.source.read_text("/proc/cpuinfo")
        except SourceError:
            return None
        values = [float(line.split(":", 1)[1]) for line in text.splitlines()
                  if line.startswith("cpu MHz") and ":" in line]
        return sum(values) / len(values) if values else None

    def poll(self) -> TuningSnapshot:
        text = cpu_sysfs_text(self.source)
        freq = parse_cpufreq(text)
        driver, states = parse_cpuidle(text)
        pm_qos = self.pm_qos()
        has_idle = driver not in ("", "none") and bool(states)
        cpu0 = [s for s in states if s.cpu == min(st.cpu for st in states)] if states else []
        allowed = tuple(s.name for s in cpu0
                        if not s.disabled and (pm_qos is None or s.latency_us <= pm_qos))
        disabled = tuple(s.name for s in cpu0 if s.name not in allowed)
        if freq:
            cur = sum(f.cur_khz for f in freq.values()) / len(freq) / 1000
            mx = max(f.max_khz for f in freq.values()) / 1000
            source = "cpufreq"
        else:
            cur, mx, source = self._cpuinfo_mhz(), None, "cpuinfo"
        return TuningSnapshot(
            governors=tuple(sorted({f.governor for f in freq.values()})),
            cur_mhz=cur, max_mhz=mx, mhz_source=source, idle_driver=driver,
            idle_allowed=allowed if has_idle else (), idle_disabled=disabled if has_idle else (),
            pm_qos_us=pm_qos, managed_by_hypervisor=not freq and not has_idle)


def first_host(allowed_ips: Sequence[str]) -> str | None:
    """The peer's own address from its allowed IPs (a /32 or /128 first)."""
    for ip in allowed_ips:
        if ip.endswith(("/32", "/128")):
            return ip.rsplit("/", 1)[0]
    return None
