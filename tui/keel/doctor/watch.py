"""`keel doctor --watch SECONDS`: what limits latency now, second by second,
in words (keel.verdicts), from the same collectors as the console UI and the
stall meter's file. One line a second, or with --json one JSON object a
second: the signals and the verdicts."""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable
from dataclasses import asdict
from typing import Any, TextIO

from keel.metrics.verdict import VerdictSnapshot

ORDER = ("tunnel", "cpu", "cake", "tuning", "latency")


def _f(value: float | None, fmt: str = "{:.0f}") -> str:
    return "-" if value is None or (isinstance(value, float) and math.isnan(value)) \
        else fmt.format(value)


def cake_rates(snap: Any) -> str:
    """CAKE's rates now, as tc has them (adaptive CAKE moves them): "cake
    up 1.3M down 3.6M", "cake up 1.3M down 3.6M adaptive", or "" with no CAKE."""
    dirs = getattr(snap, "directions", ()) or ()
    parts = [f"{'up' if d.direction == 'egress' else 'down'} {d.rate_bps / 1e6:.1f}M"
             for d in dirs if d.rate_bps is not None]
    if parts and getattr(snap, "adaptive", False):
        parts.append("adaptive")
    return "  cake " + " ".join(parts) if parts else ""


def line(snap: VerdictSnapshot, cake: Any = None) -> str:
    s, worst = snap.signals, snap.worst
    if s is None or worst is None:
        return "no signals yet"
    excess = (None if s.latency_tunnel_ms is None or s.latency_tunnel_idle_ms is None
              else s.latency_tunnel_ms - s.latency_tunnel_idle_ms)
    clock = time.strftime("%H:%M:%S", time.localtime(s.t))
    stall = ("no stall meter" if s.stall_max_ms is None
             else f"stall p99 {_f(s.stall_p99_ms)} max {_f(s.stall_max_ms)} ms")
    tunnel = ("tunnel -" if s.latency_tunnel_ms is None
              else f"tunnel {s.latency_tunnel_ms:.0f} ms"
              + ("" if excess is None else f" ({excess:+.0f})"))
    steal = "steal -" if s.steal is None else f"steal {s.steal * 100:.0f} %"
    return (f"{clock}  {stall}  {steal}  {tunnel}  load {_f(s.load_average, '{:.2f}')}"
            f"{cake_rates(cake)}  | {worst.text}")


def record(snap: VerdictSnapshot) -> dict[str, Any]:
    signals = asdict(snap.signals) if snap.signals is not None else None
    return {"t": snap.signals.t if snap.signals else None, "signals": signals,
            "verdicts": [v.as_dict() for v in snap.verdicts]}


def watch(collectors: dict[str, Any], seconds: float, out: TextIO, as_json: bool,
          clock: Callable[[], float] = time.monotonic,
          sleep: Callable[[float], None] = time.sleep) -> VerdictSnapshot | None:
    """Poll every collector once a second, then the verdict; print each second."""
    latency = collectors.get("latency")
    if latency is not None:
        latency.start()
    last = None
    try:
        end = clock() + seconds
        while True:
            tick = clock()
            for name in ORDER:
                if name in collectors:
                    collectors[name].poll()
            last = collectors["verdict"].poll()
            cake = getattr(collectors.get("cake"), "last", None)
            print(json.dumps(record(last)) if as_json else line(last, cake), file=out,
                  flush=True)
            if clock() >= end:
                return last
            sleep(max(0.0, tick + 1.0 - clock()))
    finally:
        if latency is not None:
            latency.stop()
