"""Ten seconds of the router as one Point (pure: no clock, no files).

The history daemon reads each collector once an interval (the collectors'
reads are what an emulated or a small router pays for), but keeps the facts
that come with their own second: every probe's send time, every second of the
stall meter. From those it makes the interval's seconds of verdict signals,
as the console makes them live (keel.metrics.verdict.signals_from), with
the interval's CPU, tunnel, CAKE and clock figures in each; the verdicts
judged on them (keel.verdicts.judge, the console's rules) give the causes
the point keeps, each with the seconds it was named.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from keel.history.point import MAX_EVIDENCE, Cake, Core, Latency, Point, kept
from keel.metrics.snapshots import (
    CakeSnapshot,
    CpuSnapshot,
    LatencySnapshot,
    SeriesSnapshot,
    TuningSnapshot,
    TunnelSnapshot,
)
from keel.metrics.verdict import signals_from
from keel.parse.ping import LatencySample
from keel.stall.summary import StallSecond
from keel.verdicts import Signals, Verdict, judge
from keel.verdicts import worst as worst_of

INTERVAL_S = 10  # a point's seconds (the finest the store keeps)
HEALTHY = "healthy"


@dataclass(frozen=True)
class Interval:
    """What the daemon read over [t - seconds, t)."""

    t: int
    seconds: int = INTERVAL_S
    latency: LatencySnapshot | None = None  # its series' `new`: the interval's probes
    stall: Sequence[StallSecond] = ()
    tunnel: TunnelSnapshot | None = None
    cpu: CpuSnapshot | None = None
    cake: CakeSnapshot | None = None
    cake_before: CakeSnapshot | None = None  # the read before: drops and marks are counters
    tuning: TuningSnapshot | None = None
    wan_rates: tuple[float, float] | None = None  # (rx, tx) bits/s of the WAN's NIC
    load_average: float | None = None


@dataclass(frozen=True)
class Judged:
    """The point, and the verdicts of its last second (what the metrics show now)."""

    point: Point
    verdicts: tuple[Verdict, ...] = ()
    signals: tuple[Signals, ...] = field(default=())


def percentile(ordered: Sequence[float], pct: float) -> float | None:
    """The nearest-rank percentile of values already sorted; None for none."""
    if not ordered:
        return None
    rank = max(0, min(len(ordered) - 1, math.ceil(pct / 100 * len(ordered)) - 1))
    return ordered[rank]


def latency_of(samples: Sequence[LatencySample]) -> Latency:
    """p50, p95, the slowest and the loss of one path's probes."""
    rtts = sorted(s.rtt_ms for s in samples if s.rtt_ms is not None)
    sent = len(samples)
    return Latency(p50_ms=percentile(rtts, 50), p95_ms=percentile(rtts, 95),
                   max_ms=rtts[-1] if rtts else None,
                   loss=(sent - len(rtts)) / sent if sent else None, sent=sent)


def cake_of(snap: CakeSnapshot | None, before: CakeSnapshot | None) -> dict[str, Cake]:
    """Each direction: its rate, throughput, the drops and marks since the
    read before (none when the shaper was made again: its counters restart),
    and the backlog now."""
    if snap is None or snap.error:
        return {}
    old = {d.way: d for d in (before.directions if before is not None else ())}
    out = {}
    for d in snap.directions:
        prev = old.get(d.way)
        same = prev is not None and prev.dev == d.dev and prev.drops <= d.drops \
            and prev.ecn_marks <= d.ecn_marks
        out[d.way] = Cake(
            rate_kbit=None if d.rate_bps is None else round(d.rate_bps / 1000),
            throughput_bps=d.throughput_bps,
            drops=d.drops - prev.drops if same and prev else 0,
            marks=d.ecn_marks - prev.ecn_marks if same and prev else 0,
            backlog_bytes=d.backlog_bytes, adaptive=d.adaptive is not None)
    return out


def _in_second(snap: LatencySnapshot | None, start: float) -> LatencySnapshot | None:
    """The interval's probes sent within [start, start + 1), as the console's
    collector would have handed them over that second."""
    if snap is None:
        return None
    return LatencySnapshot(start + 1, tuple(
        SeriesSnapshot(s.name, s.target, tuple(x for x in s.new if start <= x.sent < start + 1),
                       s.last_ms, s.idle_ms, s.loss) for s in snap.series))


def seconds_of(iv: Interval) -> list[Signals]:
    """The interval's seconds of verdict signals, oldest first."""
    begin = iv.t - iv.seconds
    stall = {int(s.t) - begin: s for s in iv.stall if begin <= s.t < iv.t}
    return [signals_from(begin + i + 1, stall=stall.get(i), cpu=iv.cpu, tunnel=iv.tunnel,
                         cake=iv.cake, tuning=iv.tuning,
                         latency=_in_second(iv.latency, begin + i),
                         load_average=iv.load_average)
            for i in range(iv.seconds)]


def judge_seconds(history: Sequence[Signals], new: Sequence[Signals]
                  ) -> tuple[dict[str, int], Verdict | None, tuple[Verdict, ...]]:
    """Each second of `new` judged on the window that ends with it
    (`history`: the seconds before, oldest first): the seconds each cause
    was named, the worst verdict seen (keel.verdicts' order; the first of
    equals), and the last second's verdicts."""
    window = list(history)
    counts: dict[str, int] = {}
    worst: Verdict | None = None
    last: tuple[Verdict, ...] = ()
    for second in new:
        window.append(second)
        last = judge(window[-INTERVAL_S:])
        for v in last:
            counts[v.cause] = counts.get(v.cause, 0) + 1
        if last and last[0].cause != HEALTHY:
            worst = last[0] if worst is None else worst_of([worst, last[0]])
    return counts, worst, last


def point_of(iv: Interval, history: Sequence[Signals] = ()) -> Judged:
    """The interval as a Point (`history`: the seconds of verdict signals
    before it, for the window of its first seconds)."""
    latency = {}
    if iv.latency is not None:
        for series in iv.latency.series:
            latency[series.name] = latency_of(series.new)
    tunnel_rx = tunnel_tx = None
    if iv.tunnel is not None and iv.tunnel.interfaces:
        rx = [i.rx_bps for i in iv.tunnel.interfaces]
        tx = [i.tx_bps for i in iv.tunnel.interfaces]
        tunnel_rx = sum(r for r in rx if r is not None) if any(r is not None for r in rx) \
            else None
        tunnel_tx = sum(r for r in tx if r is not None) if any(r is not None for r in tx) \
            else None
    cpu = iv.cpu if iv.cpu is not None and iv.cpu.error is None else None
    seconds = seconds_of(iv)
    counts, worst, last = judge_seconds(history, seconds)
    ranked = dict(sorted(((c, n) for c, n in counts.items() if c != HEALTHY),
                         key=lambda kv: -kv[1]))
    if HEALTHY in counts:
        ranked[HEALTHY] = counts[HEALTHY]
    point = kept(Point(
        t=iv.t, seconds=iv.seconds, latency=latency,
        wan_rx_bps=iv.wan_rates[0] if iv.wan_rates else None,
        wan_tx_bps=iv.wan_rates[1] if iv.wan_rates else None,
        tunnel_rx_bps=tunnel_rx, tunnel_tx_bps=tunnel_tx,
        cake=cake_of(iv.cake, iv.cake_before),
        cores=tuple(Core(c.user, c.system, c.softirq, c.steal) for c in cpu.cores) if cpu else (),
        stall_worst_ms=max((s.max_ms for s in iv.stall), default=None),
        tunnel_cpu_cores=cpu.cost.cores if cpu is not None and cpu.cost else None,
        causes=ranked, evidence=worst.text[:MAX_EVIDENCE] if worst else ""))
    return Judged(point, last, tuple(seconds))


def wan_rates(before: Mapping[str, int] | None, now: Mapping[str, int] | None,
              seconds: float) -> tuple[float, float] | None:
    """(rx, tx) bits/s from two reads of a NIC's byte counters (None when
    either is missing, the counters went back, or no time passed)."""
    if not before or not now or seconds <= 0:
        return None
    rx, tx = now["rx_bytes"] - before["rx_bytes"], now["tx_bytes"] - before["tx_bytes"]
    if rx < 0 or tx < 0:
        return None
    return rx * 8 / seconds, tx * 8 / seconds
