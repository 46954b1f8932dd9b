"""What the history keeps: a Point (ten seconds of the router, or the rollup
of many) and an Event (something that happened at one moment).

A point is plain data, stored as a JSON object (keel.history.store): a
reader takes the keys it knows and leaves the others, so a version of keel
that adds a key is read by an older one (an upgrade rolled back), and a key
an older one never wrote reads as None. Every figure may be None: not
measured in that interval (no tunnel, no CAKE, the probe's peer unknown).

Units are in the names: `_ms` milliseconds, `_bps` bits per second, `_kbit`
kbit/s, `_bytes` bytes, a share 0..1 as `loss` and the CPU fields.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import MISSING, asdict, dataclass, field, fields, is_dataclass, replace
from typing import Any

# the latency paths probed: through the tunnel, and to the peer outside it
PATHS = ("tunnel", "outside")
# CAKE's directions, as adaptive CAKE names them (egress: up, ingress: down)
WAYS = ("up", "down")
# an event's kinds (keel.history.events makes them)
EVENT_KINDS = ("boot", "apply", "upgrade", "handshake_lost", "handshake_back", "rate_change",
               "history_gap")
MAX_CAUSES = 8  # the verdict's named causes a point keeps
MAX_TEXT = 300  # characters of an event's words
MAX_EVIDENCE = 200  # characters of a point's evidence (a verdict's line)
MAX_CAUSE = 16  # characters of a cause's name (keel.verdicts.CAUSES: 12 at most)
MAX_CORES = 64


@dataclass(frozen=True)
class Latency:
    """One path's probes in the interval."""

    p50_ms: float | None = None
    p95_ms: float | None = None
    max_ms: float | None = None
    loss: float | None = None  # share of the probes sent that got no reply
    sent: int = 0  # probes sent (a rollup adds them up)


@dataclass(frozen=True)
class Cake:
    """One direction of CAKE in the interval."""

    rate_kbit: int | None = None  # the shaper's rate at the interval's end
    throughput_bps: float | None = None
    drops: int = 0  # in the interval
    marks: int = 0
    backlog_bytes: int = 0  # the largest seen
    adaptive: bool = False


@dataclass(frozen=True)
class Core:
    """One CPU's time in the interval, shares 0..1."""

    user: float = 0.0
    system: float = 0.0
    softirq: float = 0.0
    steal: float = 0.0


@dataclass(frozen=True)
class Point:
    """The router over [t - seconds, t): `t` is the interval's end, in Unix
    seconds, a multiple of `seconds`."""

    t: int
    seconds: int = 10
    latency: Mapping[str, Latency] = field(default_factory=dict)  # by PATHS
    wan_rx_bps: float | None = None
    wan_tx_bps: float | None = None
    tunnel_rx_bps: float | None = None
    tunnel_tx_bps: float | None = None
    cake: Mapping[str, Cake] = field(default_factory=dict)  # by WAYS
    cores: tuple[Core, ...] = ()
    stall_worst_ms: float | None = None  # the stall meter's worst wake-up
    tunnel_cpu_cores: float | None = None  # the tunnel's CPU cost, in cores
    # the verdict: each cause named in the interval, with the seconds it was
    # named (a rollup adds them), worst first; and the worst one's evidence
    causes: Mapping[str, int] = field(default_factory=dict)
    evidence: str = ""

    def as_json(self) -> dict[str, Any]:
        """JSON-ready, every field (what `keel history --json` prints)."""
        out = asdict(self)
        out["cores"] = [asdict(c) for c in self.cores]
        return out

    def as_stored(self) -> dict[str, Any]:
        """JSON-ready without the fields that hold their default (from_json
        reads a missing field as its default: nothing is lost), each core as
        [user, system, softirq, steal]: what the history keeps."""
        out = _lean(self)
        if self.cores:
            out["cores"] = [[c.user, c.system, c.softirq, c.steal] for c in self.cores]
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Point:
        """A point from its JSON object; keys this version does not know are
        left, keys it misses are None (or empty). A value of the wrong type
        raises ValueError (the store skips that row)."""
        if not isinstance(data, Mapping):
            raise ValueError("a point is a JSON object")
        return cls(
            t=_int(data.get("t"), "t"),
            seconds=_int(data.get("seconds", 10), "seconds"),
            latency={k: _of(Latency, v) for k, v in _mapping(data, "latency").items()
                     if k in PATHS},
            wan_rx_bps=_num(data.get("wan_rx_bps")), wan_tx_bps=_num(data.get("wan_tx_bps")),
            tunnel_rx_bps=_num(data.get("tunnel_rx_bps")),
            tunnel_tx_bps=_num(data.get("tunnel_tx_bps")),
            cake={k: _of(Cake, v) for k, v in _mapping(data, "cake").items() if k in WAYS},
            cores=tuple(_core(c) for c in _list(data, "cores")[:MAX_CORES]),
            stall_worst_ms=_num(data.get("stall_worst_ms")),
            tunnel_cpu_cores=_num(data.get("tunnel_cpu_cores")),
            causes={str(k)[:MAX_CAUSE]: _int(v, "causes") for k, v in
                    list(_mapping(data, "causes").items())[:MAX_CAUSES]},
            evidence=str(data.get("evidence") or "")[:MAX_EVIDENCE])


@dataclass(frozen=True)
class Event:
    """Something that happened at `t` (Unix seconds): its kind (EVENT_KINDS;
    an unknown kind from a newer version is kept as it is), its words, and
    its figures."""

    t: float
    kind: str
    text: str
    data: Mapping[str, Any] = field(default_factory=dict)

    def as_json(self) -> dict[str, Any]:
        return {"t": self.t, "kind": self.kind, "text": self.text, "data": dict(self.data)}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Event:
        if not isinstance(data, Mapping):
            raise ValueError("an event is a JSON object")
        t = _num(data.get("t"))
        if t is None:
            raise ValueError("an event needs its time")
        extra = data.get("data", {})
        return cls(t, str(data.get("kind", ""))[:40], str(data.get("text", ""))[:MAX_TEXT],
                   dict(extra) if isinstance(extra, Mapping) else {})


# --- the precision kept -----------------------------------------------------------
# a tenth of a millisecond, a bit a second, a thousandth of a CPU, a
# ten-thousandth of the probes: finer than any figure is measured, and a
# point of a 4-core router takes some 400 bytes


def kept(point: Point) -> Point:
    """`point` rounded to the precision the history keeps."""
    return replace(
        point,
        latency={k: replace(v, p50_ms=_round(v.p50_ms, 1), p95_ms=_round(v.p95_ms, 1),
                            max_ms=_round(v.max_ms, 1), loss=_round(v.loss, 4))
                 for k, v in point.latency.items()},
        wan_rx_bps=_round(point.wan_rx_bps, 0), wan_tx_bps=_round(point.wan_tx_bps, 0),
        tunnel_rx_bps=_round(point.tunnel_rx_bps, 0),
        tunnel_tx_bps=_round(point.tunnel_tx_bps, 0),
        cake={k: replace(v, throughput_bps=_round(v.throughput_bps, 0))
              for k, v in point.cake.items()},
        cores=tuple(Core(*(round(getattr(c, f.name), 3) for f in fields(Core)))
                    for c in point.cores),
        stall_worst_ms=_round(point.stall_worst_ms, 1),
        tunnel_cpu_cores=_round(point.tunnel_cpu_cores, 3))


def _round(value: float | None, digits: int) -> float | None:
    if value is None or not isinstance(value, int | float) or not math.isfinite(value):
        return value  # (not a figure: from_json refuses it, naming it)
    return float(round(value)) if digits == 0 else round(value, digits)


def _lean(obj: Any) -> Any:
    if is_dataclass(obj) and not isinstance(obj, type):
        out = {}
        for f in fields(obj):
            value = getattr(obj, f.name)
            default = f.default if f.default is not MISSING else (
                f.default_factory() if f.default_factory is not MISSING else MISSING)
            if default is MISSING or value != default:
                out[f.name] = _lean(value)
        return out
    if isinstance(obj, Mapping):
        return {k: _lean(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_lean(v) for v in obj]
    return obj


# --- a rollup: many points as one ------------------------------------------------


def rollup(points: Iterable[Point], t: int, seconds: int) -> Point | None:
    """The points of [t - seconds, t) as one point of `seconds`: latency
    p50 the median of the points' p50s, p95 and max the worst (a bad ten
    seconds stays visible in a month's view), loss weighted by probes sent;
    rates and CPU the mean; drops and marks added, backlog the largest, the
    rate the last; the causes' seconds added, the evidence of the interval
    whose worst cause was named longest. None for no points."""
    pts = sorted(points, key=lambda p: p.t)
    if not pts:
        return None
    latency = {}
    for path in PATHS:
        got = [p.latency[path] for p in pts if path in p.latency]
        if got:
            sent = sum(x.sent for x in got)
            lost = sum((x.loss or 0.0) * x.sent for x in got if x.loss is not None)
            latency[path] = Latency(
                p50_ms=_median([x.p50_ms for x in got]),
                p95_ms=_max([x.p95_ms for x in got]),
                max_ms=_max([x.max_ms for x in got]),
                loss=(lost / sent) if sent else None, sent=sent)
    cake = {}
    for way in WAYS:
        got_c = [p.cake[way] for p in pts if way in p.cake]
        if got_c:
            cake[way] = Cake(
                rate_kbit=got_c[-1].rate_kbit,
                throughput_bps=_mean([c.throughput_bps for c in got_c]),
                drops=sum(c.drops for c in got_c), marks=sum(c.marks for c in got_c),
                backlog_bytes=max(c.backlog_bytes for c in got_c),
                adaptive=any(c.adaptive for c in got_c))
    ncores = max(len(p.cores) for p in pts)
    cores = tuple(
        Core(**{f.name: _mean([getattr(p.cores[i], f.name) for p in pts if i < len(p.cores)])
                or 0.0 for f in fields(Core)})
        for i in range(ncores))
    causes: dict[str, int] = {}
    for p in pts:
        for name, secs in p.causes.items():
            causes[name] = causes.get(name, 0) + secs
    ranked = dict(sorted(causes.items(), key=lambda kv: -kv[1])[:MAX_CAUSES])
    evidence = ""
    if ranked:
        worst = next(iter(ranked))
        best = max((p for p in pts if worst in p.causes), key=lambda p: p.causes[worst])
        evidence = best.evidence
    return kept(Point(
        t=t, seconds=seconds, latency=latency,
        wan_rx_bps=_mean([p.wan_rx_bps for p in pts]),
        wan_tx_bps=_mean([p.wan_tx_bps for p in pts]),
        tunnel_rx_bps=_mean([p.tunnel_rx_bps for p in pts]),
        tunnel_tx_bps=_mean([p.tunnel_tx_bps for p in pts]),
        cake=cake, cores=cores,
        stall_worst_ms=_max([p.stall_worst_ms for p in pts]),
        tunnel_cpu_cores=_mean([p.tunnel_cpu_cores for p in pts]),
        causes=ranked, evidence=evidence))


# --- helpers ----------------------------------------------------------------------


def _present(values: Iterable[float | None]) -> list[float]:
    return [v for v in values if v is not None]


def _mean(values: Iterable[float | None]) -> float | None:
    got = _present(values)
    return sum(got) / len(got) if got else None


def _max(values: Iterable[float | None]) -> float | None:
    got = _present(values)
    return max(got) if got else None


def _median(values: Iterable[float | None]) -> float | None:
    got = sorted(_present(values))
    if not got:
        return None
    mid = len(got) // 2
    return got[mid] if len(got) % 2 else (got[mid - 1] + got[mid]) / 2


def _num(value: Any) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"not a number: {type(value).__name__}")
    try:
        number = float(value)  # an int past a float's range raises OverflowError
    except OverflowError:
        number = math.inf
    if not math.isfinite(number):
        raise ValueError("not a finite number")
    return number


def _int(value: Any, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{name}: not an integer")
    return value


def _mapping(data: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    value = data.get(key) or {}
    if not isinstance(value, Mapping):
        raise ValueError(f"{key}: not an object")
    return value


def _list(data: Mapping[str, Any], key: str) -> list[Any]:
    value = data.get(key) or []
    if not isinstance(value, list):
        raise ValueError(f"{key}: not a list")
    return value


def _core(value: Any) -> Core:
    """A core as stored ([user, system, softirq, steal]) or as printed (an object)."""
    if isinstance(value, list):
        if len(value) != 4:
            raise ValueError("a core is [user, system, softirq, steal]")
        return Core(*(_num(v) or 0.0 for v in value))
    return _of(Core, value)


def _of(cls: type, value: Any) -> Any:
    """A Latency, Cake or Core from its JSON object: known keys only, each
    of its field's kind."""
    if not isinstance(value, Mapping):
        raise ValueError(f"{cls.__name__}: not an object")
    kwargs: dict[str, Any] = {}
    for f in fields(cls):
        if f.name not in value or value[f.name] is None:
            continue
        v = value[f.name]
        if f.type in ("bool",):
            if not isinstance(v, bool):
                raise ValueError(f"{cls.__name__}.{f.name}: not a boolean")
            kwargs[f.name] = v
        elif f.type in ("int", "int | None"):
            kwargs[f.name] = _int(v, f"{cls.__name__}.{f.name}")
        else:
            kwargs[f.name] = _num(v)
    return cls(**kwargs)
