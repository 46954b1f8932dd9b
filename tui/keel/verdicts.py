"""What limits latency now, in words: live signals -> named causes with evidence.

Pure: a history of `Signals` (one per second, oldest first) goes in, verdicts
come out, worst first. Every rule must hold over a window (the last 10 s by
default), so one late probe or one long stall is never a verdict on its own.

Causes (worst first when they tie on severity):
  starved    the hypervisor does not give the CPU back: the stall meter sees
             long stalls (held, at real-time priority), or the kernel reports
             steal time. A busy CPU is not a starved one: the meter runs at
             real-time priority, so load does not delay it by 50 ms.
  cpu_bound  one core is saturated by kernel work (softirq, WireGuard's crypt
             workers) while traffic flows through the tunnel.
  bloat      latency rises with load outside the tunnel too: a queue on the
             link (no CAKE, or CAKE set above the link's rate).
  far_end    latency rises inside and outside the tunnel alike with no load
             and no stall here: the peer (its host) answers late.
  tunnel_path  latency rises inside the tunnel only: the probe outside it
             stays near its baseline, CAKE is not full, no core is saturated
             and the CPU does not stall: the peer's side, or the tunnel's path.
  clock      the CPU runs well below its maximum clock.
  idle       deep idle states (slow to wake from) are still allowed.
  line_dropped  (informational) adaptive CAKE's rate in a direction is well
             below its base while the latency through the tunnel stays low:
             the line's capacity fell and CAKE followed it.
  healthy    none of the above.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from keel.thresholds import (
    ADAPT_DROPPED_SHARE,
    BLOAT_BACKLOG_BYTES,
    BLOAT_MARGIN_MS,
    CLOCK_LOW,
    CORE_SATURATED,
    CPU_BOUND_BUSY,
    CPU_BOUND_KERNEL_SHARE,
    CPU_BOUND_MIN_MBIT,
    CPU_BOUND_TUNNEL_CPU,
    MIN_HELD_SECONDS,
    MOST_OF_WINDOW,
    NOT_REALTIME_BUSY,
    STALL_MAX_MS,
    STALL_MIN_SECONDS,
    STALL_P99_MS,
    STARVED_LATENCY_MARGIN_MS,
    STEAL_BAD,
    STEAL_MIN_SECONDS,
    TUNNEL_ONLY_OUTSIDE_SHARE,
)

CAUSES = ("starved", "cpu_bound", "bloat", "far_end", "tunnel_path", "clock", "idle",
          "line_dropped", "healthy")
SEVERITIES = ("bad", "warn", "ok")


@dataclass(frozen=True)
class Signals:
    """What was seen in one second. None (or empty) = unknown."""

    t: float  # wall clock, epoch seconds
    stall_p99_ms: float | None = None  # None: no stall meter running
    stall_max_ms: float | None = None
    stall_realtime: bool = True  # the meter ran at SCHED_FIFO
    steal: float | None = None  # share 0..1 of all CPUs' time
    steal_reported: bool = False  # the kernel/hypervisor accounts steal at all
    softirq: Mapping[str, float] = field(default_factory=dict)  # "cpu0" -> 0..1
    busy: Mapping[str, float] = field(default_factory=dict)  # "cpu0" -> 0..1, non-idle
    system: Mapping[str, float] = field(default_factory=dict)  # "cpu0" -> 0..1, optional
    tunnel_cpu: float | None = None  # the tunnel's CPU, in cores (1.0 = one core)
    tunnel_mbit: float | None = None  # throughput through the tunnel, both ways
    latency_tunnel_ms: float | None = None  # the second's median probe
    latency_tunnel_idle_ms: float | None = None
    latency_tunnel_worst_ms: float | None = None  # the second's slowest probe
    latency_outside_ms: float | None = None  # the peer, pinged outside the tunnel
    latency_outside_idle_ms: float | None = None
    cake_on: bool = False
    cake_backlog_bytes: int | None = None
    cake_drops: int | None = None  # cumulative
    clock_mhz: float | None = None
    clock_max_mhz: float | None = None
    deep_idle_allowed: tuple[str, ...] = ()  # idle states, exit > DEEP_IDLE_EXIT_US
    deep_idle_exit_us: Mapping[str, int] = field(default_factory=dict)  # optional
    load_average: float | None = None  # 1-minute
    # adaptive CAKE, per direction: its rate now (tc's) and its base, kbit/s;
    # None where a direction's rate is fixed (or not shaped)
    adapt_up_kbit: float | None = None
    adapt_up_base_kbit: float | None = None
    adapt_down_kbit: float | None = None
    adapt_down_base_kbit: float | None = None


@dataclass(frozen=True)
class Verdict:
    cause: str  # one of CAUSES
    severity: str  # one of SEVERITIES
    text: str  # one line, in words, with the numbers
    evidence: Mapping[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {"cause": self.cause, "severity": self.severity, "text": self.text,
                "evidence": dict(self.evidence)}


# --- helpers -----------------------------------------------------------------

def _excess(now: float | None, idle: float | None) -> float | None:
    return None if now is None or idle is None else now - idle


def _held(count: int, window: int) -> bool:
    """True when `count` seconds are most of a window of `window` seconds."""
    return count >= max(MIN_HELD_SECONDS, math.ceil(MOST_OF_WINDOW * window))


def _r(value: float | None, digits: int = 1) -> float | None:
    return None if value is None else round(value, digits)


def _pct(fraction: float) -> str:
    return f"{fraction * 100:.0f} %"


def _ms(value: float) -> str:
    return f"{value:.0f} ms"


def _cpu_name(cpu: str | int) -> str:
    return f"cpu{cpu}" if isinstance(cpu, int) else cpu


def _values(window: Sequence[Signals], get: Callable[[Signals], float | None]) -> list[float]:
    return [v for v in map(get, window) if v is not None]


def _stalled(s: Signals) -> bool:
    if s.stall_p99_ms is None and s.stall_max_ms is None:
        return False
    # At real-time priority a busy core does not delay the meter by the
    # stall threshold: softirq yields to ksoftirqd after 2 ms, and a throttled
    # VM's lost time shows as busy (it is charged to whatever ran). Only a
    # meter without real-time priority is held back by load.
    busiest = max(s.busy.values(), default=0.0)
    if not s.stall_realtime and busiest >= NOT_REALTIME_BUSY:
        return False  # ordinary load can delay a meter without real-time priority
    return ((s.stall_p99_ms or 0.0) >= STALL_P99_MS
            or (s.stall_max_ms or 0.0) >= STALL_MAX_MS)


# --- the rules ---------------------------------------------------------------

def _starved(window: Sequence[Signals]) -> Verdict | None:
    n = len(window)
    stalled = [s for s in window if _stalled(s)]
    stealing = [s for s in window if s.steal is not None and s.steal >= STEAL_BAD]
    by_stalls = len(stalled) >= STALL_MIN_SECONDS
    by_steal = len(stealing) >= STEAL_MIN_SECONDS
    if not (by_stalls or by_steal):
        return None
    # a stall delays the probes it catches, not the median of a second's five:
    # the slowest probe of each second shows it. It is evidence, not a
    # condition: the router's own pings run in step with the stalls (their
    # timer fires as the CPU comes back, the reply is in before it goes
    # again), so a starved hub sees its own probes on time while every packet
    # it forwards waits (docs/verdicts.md). The stall meter, at real-time
    # priority, is the proof.
    excess = _values(window, lambda s: _excess(
        s.latency_tunnel_worst_ms if s.latency_tunnel_worst_ms is not None
        else s.latency_tunnel_ms, s.latency_tunnel_idle_ms))
    late = [e for e in excess if e >= STARVED_LATENCY_MARGIN_MS]
    severity = "bad"

    parts: list[str] = []
    maxes = _values(window, lambda s: s.stall_max_ms)
    p99s = _values(window, lambda s: s.stall_p99_ms)
    if maxes:
        parts.append(f"the CPU stalls up to {_ms(max(maxes))} (p99 {_ms(max(p99s or [0.0]))})"
                     f" in {len(stalled)} of the last {n} s")
    steals = _values(window, lambda s: s.steal)
    reported = any(s.steal_reported for s in window)
    steal_mean = statistics.fmean(steals) if steals else None
    if steal_mean is None:
        parts.append("steal unknown")
    elif not reported and steal_mean == 0:
        parts.append("steal 0 % (this hypervisor reports none)")
    else:
        parts.append(f"steal {_pct(steal_mean)}"
                     + (f" ({len(stealing)} of the last {n} s at {_pct(STEAL_BAD)} or more)"
                        if by_steal else ""))
    text = "the VPS is starving this router: " + ", ".join(parts)
    extra: list[str] = []
    if excess:
        extra.append(f"tunnel latency up to +{_ms(max(excess))} over idle")
    else:
        extra.append("tunnel latency unknown")
    loads = _values(window, lambda s: s.load_average)
    if loads:
        extra.append(f"load average {loads[-1]:.1f}")
    text += "; " + ", ".join(extra)
    evidence = {
        "seconds": n,
        "stalled_seconds": len(stalled),
        "stall_max_ms": _r(max(maxes)) if maxes else None,
        "stall_p99_ms": _r(max(p99s)) if p99s else None,
        "steal": _r(steal_mean, 3),
        "steal_seconds": len(stealing),
        "steal_reported": reported,
        "tunnel_excess_ms": _r(max(excess)) if excess else None,
        "tunnel_late_seconds": len(late),
        "load_average": loads[-1] if loads else None,
    }
    return Verdict("starved", severity, text, evidence)


def _flows(s: Signals) -> bool:
    return ((s.tunnel_mbit or 0.0) >= CPU_BOUND_MIN_MBIT
            or (s.tunnel_cpu or 0.0) >= CPU_BOUND_TUNNEL_CPU)


def _hot_cores(s: Signals) -> list[str]:
    if not _flows(s):
        return []
    hot = []
    for cpu, busy in s.busy.items():
        if busy < CPU_BOUND_BUSY:
            continue
        kernel = s.softirq.get(cpu, 0.0) + s.system.get(cpu, 0.0)
        if (kernel >= CPU_BOUND_KERNEL_SHARE * busy
                or (s.tunnel_cpu or 0.0) >= CPU_BOUND_TUNNEL_CPU):
            hot.append(cpu)
    return hot


def _cpu_bound(window: Sequence[Signals]) -> Verdict | None:
    n = len(window)
    counts: dict[str, int] = {}
    for s in window:
        for cpu in _hot_cores(s):
            counts[cpu] = counts.get(cpu, 0) + 1
    cores = sorted((c for c, k in counts.items() if _held(k, n)),
                   key=lambda c: (-counts[c], _cpu_name(c)))
    if not cores:
        return None
    hot = [s for s in window if set(cores) & set(_hot_cores(s))]
    softirq = {c: statistics.fmean([s.softirq.get(c, 0.0) for s in hot if c in _hot_cores(s)])
               for c in cores}
    busy = {c: statistics.fmean([s.busy[c] for s in hot if c in _hot_cores(s)]) for c in cores}
    mbit = _values(hot, lambda s: s.tunnel_mbit)
    tunnel = _values(hot, lambda s: s.tunnel_cpu)
    names = ", ".join(_cpu_name(c) for c in cores)
    figures = [("softirq " + ", ".join(_pct(softirq[c]) for c in cores))]
    if mbit:
        figures.append(f"{statistics.fmean(mbit):.0f} Mbit/s")
    if tunnel:
        figures.append(f"the tunnel takes {statistics.fmean(tunnel):.2f} cores")
    text = f"the tunnel is CPU-bound on {names}: " + ", ".join(figures)
    evidence = {
        "seconds": n,
        "cores": [_cpu_name(c) for c in cores],
        "hot_seconds": {_cpu_name(c): counts[c] for c in cores},
        "softirq": {_cpu_name(c): _r(softirq[c], 3) for c in cores},
        "busy": {_cpu_name(c): _r(busy[c], 3) for c in cores},
        "tunnel_mbit": _r(statistics.fmean(mbit)) if mbit else None,
        "tunnel_cpu": _r(statistics.fmean(tunnel), 3) if tunnel else None,
    }
    return Verdict("cpu_bound", "bad", text, evidence)


def _loaded(s: Signals) -> bool:
    """Traffic that can fill a queue: through the tunnel, or held by CAKE."""
    return ((s.tunnel_mbit or 0.0) >= CPU_BOUND_MIN_MBIT
            or (s.cake_backlog_bytes or 0) >= BLOAT_BACKLOG_BYTES)


def _bloat(window: Sequence[Signals]) -> Verdict | None:
    n = len(window)
    outside: list[float] = []  # excess outside the tunnel in the bloated seconds
    tunnel: list[float] = []  # excess through it, where the outside is unknown
    bloated: list[Signals] = []
    for s in window:
        out = _excess(s.latency_outside_ms, s.latency_outside_idle_ms)
        tun = _excess(s.latency_tunnel_ms, s.latency_tunnel_idle_ms)
        if not _loaded(s):
            continue  # latency that rises without load is not a queue filling
        if out is not None:
            if out >= BLOAT_MARGIN_MS:
                outside.append(out)
                bloated.append(s)
        elif (tun is not None and tun >= BLOAT_MARGIN_MS and not _stalled(s)
              and (not s.cake_on or (s.cake_backlog_bytes or 0) >= BLOAT_BACKLOG_BYTES)):
            # no view outside the tunnel: a rising tunnel latency with no shaper
            # (or a full one) and no stall to explain it
            tunnel.append(tun)
            bloated.append(s)
    if not _held(len(bloated), n):
        return None
    last = bloated[-1]
    cake_on = last.cake_on
    if outside:
        rise = statistics.median(outside)
        text = f"the link is bloated: latency rises with load outside the tunnel too (+{_ms(rise)})"
        text += "; CAKE is set above the link's rate" if cake_on else "; CAKE is off"
    else:
        rise = statistics.median(tunnel)
        text = f"the link is bloated: latency through the tunnel rises with load (+{_ms(rise)})"
        if cake_on:
            text += f"; CAKE holds {(last.cake_backlog_bytes or 0) / 1024:.0f} KiB"
        else:
            text += "; CAKE is off"
    mbit = _values(bloated, lambda s: s.tunnel_mbit)
    drops = _values(window, lambda s: s.cake_drops)
    evidence = {
        "seconds": n,
        "bloated_seconds": len(bloated),
        "seen": "outside" if outside else "tunnel",
        "rise_ms": _r(rise),
        "cake_on": cake_on,
        "cake_backlog_bytes": last.cake_backlog_bytes,
        "cake_drops": int(drops[-1] - drops[0]) if len(drops) >= 2 else None,
        "tunnel_mbit": _r(statistics.fmean(mbit)) if mbit else None,
    }
    return Verdict("bloat", "bad", text, evidence)


def _far_end(window: Sequence[Signals]) -> Verdict | None:
    n = len(window)
    late: list[tuple[float, float]] = []  # (tunnel, outside) excess of the late seconds
    for s in window:
        tun = _excess(s.latency_tunnel_ms, s.latency_tunnel_idle_ms)
        out = _excess(s.latency_outside_ms, s.latency_outside_idle_ms)
        if (tun is not None and out is not None and tun >= BLOAT_MARGIN_MS
                and out >= BLOAT_MARGIN_MS and not _loaded(s) and not _stalled(s)):
            late.append((tun, out))
    if not _held(len(late), n):
        return None
    tun = statistics.median(t for t, _ in late)
    out = statistics.median(o for _, o in late)
    text = (f"the far end answers late: +{_ms(tun)} through the tunnel and +{_ms(out)} "
            "outside it, with no load and no stall here (is the peer's host starving? "
            "keel doctor --watch there)")
    return Verdict("far_end", "warn", text, {"seconds": n, "late_seconds": len(late),
                                             "tunnel_excess_ms": _r(tun),
                                             "outside_excess_ms": _r(out)})


def _tunnel_only(s: Signals) -> tuple[float, float] | None:
    """(tunnel, outside) excess of a second whose latency rose inside the
    tunnel only, with nothing here to explain it; None otherwise."""
    tun = _excess(s.latency_tunnel_ms, s.latency_tunnel_idle_ms)
    out = _excess(s.latency_outside_ms, s.latency_outside_idle_ms)
    if tun is None or out is None or tun < BLOAT_MARGIN_MS:
        return None
    if out >= BLOAT_MARGIN_MS or out >= TUNNEL_ONLY_OUTSIDE_SHARE * tun:
        return None  # the outside rose too: the link, or the far end's host
    if (s.cake_backlog_bytes or 0) >= BLOAT_BACKLOG_BYTES:
        return None  # CAKE full: a queue here (bloat's, when it holds)
    if max(s.busy.values(), default=0.0) >= CORE_SATURATED or _stalled(s):
        return None  # this router's CPU explains it
    return tun, out


def _tunnel_path(window: Sequence[Signals]) -> Verdict | None:
    n = len(window)
    late = [(s, e) for s in window if (e := _tunnel_only(s)) is not None]
    if not _held(len(late), n):
        return None
    tun = statistics.median(t for _, (t, _) in late)
    out = statistics.median(o for _, (_, o) in late)
    busy = [max(s.busy.values()) for s, _ in late if s.busy]
    backlog = _values([s for s, _ in late], lambda s: s.cake_backlog_bytes)
    mbit = _values([s for s, _ in late], lambda s: s.tunnel_mbit)
    # fits the dashboard's NOW line (80 columns) with two-digit figures
    text = (f"latency rises in the tunnel only: +{_ms(tun)} (outside +{out:.0f}): "
            "the peer's side or path")
    return Verdict("tunnel_path", "warn", text, {
        "seconds": n, "late_seconds": len(late),
        "tunnel_excess_ms": _r(tun), "outside_excess_ms": _r(out),
        "cake_backlog_bytes": int(max(backlog)) if backlog else None,
        "busiest_core": _r(max(busy), 3) if busy else None,
        "tunnel_mbit": _r(statistics.fmean(mbit)) if mbit else None})


def _clock(window: Sequence[Signals]) -> Verdict | None:
    n = len(window)
    slow: list[tuple[float, float]] = []  # (MHz, max MHz) of the slow seconds
    for s in window:
        if (s.clock_mhz is not None and s.clock_max_mhz
                and s.clock_mhz < CLOCK_LOW * s.clock_max_mhz):
            slow.append((s.clock_mhz, s.clock_max_mhz))
    if not _held(len(slow), n):
        return None
    mhz = statistics.median(m for m, _ in slow)
    top = slow[-1][1]
    ratio = mhz / top
    text = f"CPU clock at {_pct(ratio)} of its maximum ({mhz:.0f} of {top:.0f} MHz)"
    return Verdict("clock", "warn", text, {"seconds": n, "slow_seconds": len(slow),
                                           "clock_mhz": _r(mhz), "clock_max_mhz": _r(top),
                                           "ratio": _r(ratio, 3)})


def _idle(window: Sequence[Signals]) -> Verdict | None:
    last = window[-1]  # a setting, not a fluctuation: the latest state is the state
    if not last.deep_idle_allowed:
        return None
    states = [f"{name} (exit {last.deep_idle_exit_us[name]} us)"
              if name in last.deep_idle_exit_us else name
              for name in last.deep_idle_allowed]
    return Verdict("idle", "warn", "deep idle states allowed: " + ", ".join(states),
                   {"states": list(last.deep_idle_allowed),
                    "exit_us": {k: last.deep_idle_exit_us[k] for k in last.deep_idle_allowed
                                if k in last.deep_idle_exit_us}})


def _adapted(s: Signals, way: str) -> tuple[float, float] | None:
    """(rate, base) kbit/s of a direction adaptive CAKE holds well below its
    base in a second whose latency through the tunnel is not bloated (or
    not known: the daemon's own one-way delays are what moved the rate);
    None otherwise."""
    rate, base = getattr(s, f"adapt_{way}_kbit"), getattr(s, f"adapt_{way}_base_kbit")
    if rate is None or not base or rate >= ADAPT_DROPPED_SHARE * base:
        return None
    excess = _excess(s.latency_tunnel_ms, s.latency_tunnel_idle_ms)
    if excess is not None and excess >= BLOAT_MARGIN_MS:
        return None  # the latency is not fine: bloat's (or another's) to name
    return rate, base


def _line_dropped(window: Sequence[Signals]) -> Verdict | None:
    n = len(window)
    held: dict[str, list[tuple[float, float]]] = {}
    for way in ("up", "down"):
        low = [got for s in window if (got := _adapted(s, way)) is not None]
        if _held(len(low), n):
            held[way] = low
    if not held:
        return None
    # the rate now: the last second it was low (the window's last, as a rule)
    now = {way: low[-1] for way, low in held.items()}
    # "to 1.1 Mbit/s up (base 1.4)", "to 1.1 Mbit/s up, 2.0 down (bases 1.4, 3.6)":
    # the dashboard's NOW line holds it in 80 columns
    parts = [f"{rate / 1000:.1f}{' Mbit/s' if i == 0 else ''} {way}"
             for i, (way, (rate, _)) in enumerate(now.items())]
    bases = [f"{base / 1000:.1f}" for _, base in now.values()]
    text = (f"the line dropped to {', '.join(parts)} "
            f"(base{'s' if len(bases) > 1 else ''} {', '.join(bases)}): CAKE followed")
    excess = _values(window, lambda s: _excess(s.latency_tunnel_ms, s.latency_tunnel_idle_ms))
    evidence: dict[str, Any] = {"seconds": n, "tunnel_excess_ms": _r(max(excess)) if excess
                                else None}
    for way, (rate, base) in now.items():
        evidence[way] = {"rate_kbit": round(rate), "base_kbit": round(base),
                         "share": _r(rate / base, 3), "low_seconds": len(held[way])}
    return Verdict("line_dropped", "ok", text, evidence)


RULES: tuple[Callable[[Sequence[Signals]], Verdict | None], ...] = (
    _starved, _cpu_bound, _bloat, _far_end, _tunnel_path, _clock, _idle, _line_dropped)


def _healthy(window: Sequence[Signals]) -> Verdict:
    maxes = _values(window, lambda s: s.stall_max_ms)
    steals = _values(window, lambda s: s.steal)
    excess = _values(window, lambda s: _excess(s.latency_tunnel_ms, s.latency_tunnel_idle_ms))
    return Verdict("healthy", "ok", "healthy", {
        "seconds": len(window),
        "stall_max_ms": _r(max(maxes)) if maxes else None,
        "steal": _r(statistics.fmean(steals), 3) if steals else None,
        "tunnel_excess_ms": _r(max(excess)) if excess else None,
    })


def _rank(v: Verdict) -> tuple[int, int]:
    return SEVERITIES.index(v.severity), CAUSES.index(v.cause)


# --- the API -----------------------------------------------------------------

def window_of(history: Sequence[Signals], window_s: int = 10) -> list[Signals]:
    """The last window_s seconds of history (by their clock, at most window_s entries)."""
    if not history:
        return []
    end = history[-1].t
    return [s for s in history[-window_s:] if s.t > end - window_s]


def judge(history: Sequence[Signals], window_s: int = 10) -> tuple[Verdict, ...]:
    """Verdicts over the last window_s seconds of history (oldest first), worst
    first; exactly one "healthy" verdict when nothing else holds, () when there
    is no history yet."""
    window = window_of(history, window_s)
    if not window:
        return ()
    found = [v for v in (rule(window) for rule in RULES) if v is not None]
    return tuple(sorted(found, key=_rank)) or (_healthy(window),)


def worst(verdicts: Sequence[Verdict]) -> Verdict:
    """The worst verdict (the first of judge()'s); ValueError when there is none."""
    if not verdicts:
        raise ValueError("no verdicts")
    return min(verdicts, key=_rank)


def as_dict(verdicts: Sequence[Verdict]) -> dict[str, Any]:
    """JSON-ready: {"worst": cause or None, "severity": ..., "verdicts": [...]}."""
    top = worst(verdicts) if verdicts else None
    return {"worst": top.cause if top else None, "severity": top.severity if top else None,
            "verdicts": [v.as_dict() for v in sorted(verdicts, key=_rank)]}
