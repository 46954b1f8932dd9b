"""The verdict collector: the other collectors' latest snapshots, the stall
meter's latest second and the load average, as one second of
keel.verdicts.Signals; judged over the last seconds, kept for the last hour.

It reads no fact twice: CPU, tunnel, CAKE, tuning and latency come from the
snapshots the other collectors already made (their `last`), the stall from the
meter's file (keel stall-meter, a process of its own)."""

from __future__ import annotations

import statistics
import time
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from keel.metrics.snapshots import (
    CakeSnapshot,
    CpuSnapshot,
    LatencySnapshot,
    TuningSnapshot,
    TunnelSnapshot,
)
from keel.stall.store import DEFAULT_PATH, read_recent
from keel.stall.summary import StallSecond
from keel.system.cpu_times import read_load_average
from keel.system.source import Source
from keel.thresholds import DEEP_IDLE_EXIT_US
from keel.verdicts import Signals, Verdict, judge

HOUR = 3600
STALL_FRESH_S = 3.0  # an older stall line means the meter is not running


def _latency(snap: LatencySnapshot | None,
             name: str) -> tuple[float | None, float | None, float | None]:
    """(RTT now, idle baseline, the slowest RTT) of a series: the median and
    the worst of the samples that came since the previous snapshot, else the
    latest RTT."""
    series = snap.get(name) if snap is not None else None
    if series is None:
        return None, None, None
    got = [s.rtt_ms for s in series.new if s.rtt_ms is not None]
    if not got:
        return series.last_ms, series.idle_ms, series.last_ms
    return statistics.median(got), series.idle_ms, max(got)


def signals_from(t: float, *, stall: StallSecond | None = None, cpu: CpuSnapshot | None = None,
                 tunnel: TunnelSnapshot | None = None, cake: CakeSnapshot | None = None,
                 tuning: TuningSnapshot | None = None, latency: LatencySnapshot | None = None,
                 load_average: float | None = None) -> Signals:
    """One second of signals from what the collectors saw (pure)."""
    cores = cpu.cores if cpu is not None and cpu.error is None else ()
    tun_ms, tun_idle, tun_worst = _latency(latency, "tunnel")
    out_ms, out_idle, _ = _latency(latency, "outside")
    mbit = None
    if tunnel is not None and tunnel.interfaces:
        rates = [r for i in tunnel.interfaces for r in (i.rx_bps, i.tx_bps) if r is not None]
        mbit = sum(rates) / 1e6 if rates else None
    dirs = cake.directions if cake is not None else ()
    deep = tuple(name for name, exit_us in (tuning.idle_exit_us if tuning else ())
                 if exit_us > DEEP_IDLE_EXIT_US)
    # adaptive CAKE: each direction's rate now (tc's) and its base, kbit/s
    adapt: dict[str, float | None] = {}
    for d in dirs:
        if d.adaptive is not None and d.rate_bps is not None:
            adapt[f"adapt_{d.way}_kbit"] = d.rate_bps / 1000
            adapt[f"adapt_{d.way}_base_kbit"] = d.adaptive.base_bps / 1000
    return Signals(
        t=t,
        stall_p99_ms=stall.p99_ms if stall else None,
        stall_max_ms=stall.max_ms if stall else None,
        stall_realtime=stall.realtime if stall else True,
        steal=(stall.steal if stall and stall.steal is not None
               else cpu.total.steal if cpu is not None and cpu.total else None),
        steal_reported=bool(cpu and cpu.steal_reported),
        softirq={c.cpu: c.softirq for c in cores},
        busy={c.cpu: 1.0 - c.idle for c in cores},
        system={c.cpu: c.system for c in cores},
        tunnel_cpu=cpu.cost.cores if cpu is not None and cpu.cost else None,
        tunnel_mbit=mbit,
        latency_tunnel_ms=tun_ms, latency_tunnel_idle_ms=tun_idle,
        latency_tunnel_worst_ms=tun_worst,
        latency_outside_ms=out_ms, latency_outside_idle_ms=out_idle,
        cake_on=bool(dirs),
        cake_backlog_bytes=sum(d.backlog_bytes for d in dirs) if dirs else None,
        cake_drops=sum(d.drops for d in dirs) if dirs else None,
        clock_mhz=tuning.cur_mhz if tuning else None,
        clock_max_mhz=tuning.max_mhz if tuning else None,
        deep_idle_allowed=deep,
        deep_idle_exit_us=dict(tuning.idle_exit_us) if tuning else {},
        load_average=load_average, **adapt)


@dataclass(frozen=True)
class VerdictSnapshot:
    signals: Signals | None = None
    verdicts: tuple[Verdict, ...] = ()
    stall: StallSecond | None = None  # None: no stall meter running
    history: tuple[Signals, ...] = ()  # the last hour, one a second, oldest first
    error: str | None = None

    @property
    def worst(self) -> Verdict | None:
        return self.verdicts[0] if self.verdicts else None


def latest_stall(path: Path | str = DEFAULT_PATH,
                 wallclock: Callable[[], float] = time.time) -> StallSecond | None:
    now = wallclock()
    recent = read_recent(path, STALL_FRESH_S, now=now)
    return recent[-1] if recent else None


class VerdictCollector:
    """Polled once a second, after (or beside) the other collectors."""

    def __init__(self, collectors: Mapping[str, Any], source: Source,
                 stall: Callable[[], StallSecond | None] | None = None,
                 wallclock: Callable[[], float] = time.time, hour: int = HOUR) -> None:
        self.collectors, self.source, self.wallclock = collectors, source, wallclock
        self.stall = stall or (lambda: latest_stall(wallclock=wallclock))
        self._history: deque[Signals] = deque(maxlen=hour)
        self.last: VerdictSnapshot | None = None

    def _last(self, name: str) -> Any:
        collector = self.collectors.get(name)
        return getattr(collector, "last", None)

    def poll(self) -> VerdictSnapshot:
        now = self.wallclock()
        stall = self.stall()
        signals = signals_from(
            now, stall=stall, cpu=self._last("cpu"), tunnel=self._last("tunnel"),
            cake=self._last("cake"), tuning=self._last("tuning"),
            latency=self._last("latency"), load_average=read_load_average(self.source))
        self._history.append(signals)
        history = tuple(self._history)
        self.last = VerdictSnapshot(signals, judge(history), stall, history)
        return self.last
