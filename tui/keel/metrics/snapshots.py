"""Immutable snapshots the collectors build and the UI renders (never edits)."""

from __future__ import annotations

from dataclasses import dataclass, field

from keel.parse.ping import LatencySample


@dataclass(frozen=True)
class PeerStat:
    interface: str
    public_key: str
    endpoint: str | None
    allowed_ips: tuple[str, ...]
    handshake_age: float | None  # seconds; None = never
    rx_bps: float | None  # bits/s; None until two reads
    tx_bps: float | None


@dataclass(frozen=True)
class InterfaceStat:
    name: str
    listen_port: int
    rx_bps: float | None
    tx_bps: float | None
    rx_pps: float | None  # packets/s from /sys/class/net; None = unknown
    tx_pps: float | None


@dataclass(frozen=True)
class TunnelSnapshot:
    interfaces: tuple[InterfaceStat, ...] = ()
    peers: tuple[PeerStat, ...] = ()
    error: str | None = None
    # the tunnel's rates (every WireGuard interface together, bits/s), one per
    # poll, oldest first: what the dashboard's sparklines draw
    rx_history: tuple[float, ...] = ()
    tx_history: tuple[float, ...] = ()


@dataclass(frozen=True)
class CoreStat:
    cpu: str
    user: float  # shares 0..1
    system: float
    softirq: float
    steal: float
    idle: float


@dataclass(frozen=True)
class TunnelCost:
    """What the tunnel cost between two reads: softirq time (all of it: the
    NET_RX/NET_TX work of WireGuard and of the NICs under it) plus the
    wg-crypt kworkers."""

    softirq_seconds: float
    crypt_seconds: float
    wall_seconds: float
    ncpus: int
    tunnel_bytes: int | None  # rx + tx through the wg interfaces; None = unknown

    @property
    def cpu_seconds(self) -> float:
        return self.softirq_seconds + self.crypt_seconds

    @property
    def cores(self) -> float:
        """CPU-seconds per second: 1.0 = one core fully busy."""
        return self.cpu_seconds / self.wall_seconds if self.wall_seconds > 0 else 0.0

    @property
    def percent(self) -> float:
        """Percent of all CPUs."""
        return 100.0 * self.cores / self.ncpus if self.ncpus else 0.0

    @property
    def gigabits(self) -> float | None:
        return None if self.tunnel_bytes is None else self.tunnel_bytes * 8 / 1e9

    @property
    def throughput_bps(self) -> float | None:
        if self.tunnel_bytes is None or self.wall_seconds <= 0:
            return None
        return self.tunnel_bytes * 8 / self.wall_seconds

    @property
    def seconds_per_gigabit(self) -> float | None:
        """CPU-seconds per gigabit carried; None when too little went through
        (under 1 Mbit) to say."""
        gbit = self.gigabits
        if gbit is None or gbit < 1e-3:
            return None
        return self.cpu_seconds / gbit


@dataclass(frozen=True)
class CpuSnapshot:
    cores: tuple[CoreStat, ...] = ()
    total: CoreStat | None = None
    cost: TunnelCost | None = None
    warnings: tuple[str, ...] = ()
    steal_reported: bool = False  # any steal time since boot: the hypervisor accounts it
    error: str | None = None


@dataclass(frozen=True)
class TinStat:
    name: str
    peak_delay_ms: float
    avg_delay_ms: float
    drops: int
    ecn_marks: int
    backlog_bytes: int
    packets: int


@dataclass(frozen=True)
class CakeAdaptive:
    """Adaptive CAKE's bounds of one direction (the daemon's adapt.json),
    bits/s: it moves the rate between min_bps and max_bps, from base_bps."""

    min_bps: int
    base_bps: int
    max_bps: int


@dataclass(frozen=True)
class CakeDirection:
    direction: str  # "egress" or "ingress"
    dev: str
    rate_bps: int | None  # the shaper's rate; None = unlimited
    throughput_bps: float | None  # None until two reads
    backlog_bytes: int
    drops: int  # cumulative
    ecn_marks: int
    tins: tuple[TinStat, ...]
    adaptive: CakeAdaptive | None = None  # None: a fixed rate (no adaptive daemon on it)
    # CAKE's rate and what went through it (bits/s), one per poll, oldest
    # first: the last minutes the panel's sparklines draw
    rate_history: tuple[float, ...] = ()
    throughput_history: tuple[float, ...] = ()
    sent_bytes: int | None = None  # cumulative, tc's counter (None: not read); the exposition's

    @property
    def way(self) -> str:
        """"up" (egress) or "down" (ingress), as adaptive CAKE names them."""
        return "up" if self.direction == "egress" else "down"


@dataclass(frozen=True)
class CakeSnapshot:
    directions: tuple[CakeDirection, ...] = ()
    error: str | None = None
    # adaptive CAKE's daemon: seconds since its peer last answered (None: it
    # has not yet, or no daemon runs)
    peer_silent_s: float | None = None

    @property
    def adaptive(self) -> bool:
        """Adaptive CAKE moves the rate of some direction."""
        return any(d.adaptive is not None for d in self.directions)


@dataclass(frozen=True)
class TuningSnapshot:
    governors: tuple[str, ...] = ()  # distinct governors in force
    cur_mhz: float | None = None  # average over CPUs
    max_mhz: float | None = None
    mhz_source: str = "cpufreq"  # or "cpuinfo"
    idle_driver: str = ""
    idle_allowed: tuple[str, ...] = ()  # state names the CPUs may still enter
    idle_disabled: tuple[str, ...] = ()
    idle_exit_us: tuple[tuple[str, int], ...] = ()  # allowed states' exit latency
    pm_qos_us: int | None = None
    managed_by_hypervisor: bool = False
    error: str | None = None


@dataclass(frozen=True)
class SeriesSnapshot:
    name: str  # "tunnel" or "outside"
    target: str
    new: tuple[LatencySample, ...]  # arrived since the previous snapshot
    last_ms: float | None
    idle_ms: float | None  # idle baseline (a low percentile of the history)
    loss: float  # share of recent probes lost, 0..1


@dataclass(frozen=True)
class LatencySnapshot:
    now: float
    series: tuple[SeriesSnapshot, ...] = field(default_factory=tuple)

    def get(self, name: str) -> SeriesSnapshot | None:
        return next((s for s in self.series if s.name == name), None)

    @property
    def tunnel_cost_ms(self) -> float | None:
        """Idle RTT through the tunnel minus idle RTT to the peer outside it."""
        inner, outer = self.get("tunnel"), self.get("outside")
        if inner is None or outer is None or inner.idle_ms is None or outer.idle_ms is None:
            return None
        return inner.idle_ms - outer.idle_ms
