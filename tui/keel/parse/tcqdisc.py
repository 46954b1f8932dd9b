"""`tc -s -j qdisc show`: CAKE instances with their rate, counters and tins."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

TIN_NAMES = {
    1: ("Best Effort",),
    3: ("Bulk", "Best Effort", "Voice"),
    4: ("Bulk", "Best Effort", "Video", "Voice"),
    8: tuple(f"Tin {i}" for i in range(8)),
}


@dataclass(frozen=True)
class CakeTin:
    name: str
    threshold_bps: int  # bits/s
    sent_bytes: int
    sent_packets: int
    backlog_bytes: int
    drops: int
    ecn_marks: int
    peak_delay_us: int
    avg_delay_us: int
    base_delay_us: int


@dataclass(frozen=True)
class Qdisc:
    dev: str
    kind: str
    handle: str
    root: bool
    bytes: int
    packets: int
    drops: int
    backlog: int
    qlen: int
    bandwidth_bps: int | None  # CAKE only; None = unlimited or not CAKE
    options: dict[str, Any]
    tins: tuple[CakeTin, ...]

    @property
    def is_cake(self) -> bool:
        return self.kind == "cake"

    @property
    def ecn_marks(self) -> int:
        return sum(t.ecn_marks for t in self.tins)


def _tins(raw: list[dict[str, Any]]) -> tuple[CakeTin, ...]:
    names = TIN_NAMES.get(len(raw), tuple(f"Tin {i}" for i in range(len(raw))))
    return tuple(
        CakeTin(
            name=names[i],
            threshold_bps=int(t.get("threshold_rate", 0)) * 8,
            sent_bytes=int(t.get("sent_bytes", 0)),
            sent_packets=int(t.get("sent_packets", 0)),
            backlog_bytes=int(t.get("backlog_bytes", 0)),
            drops=int(t.get("drops", 0)),
            ecn_marks=int(t.get("ecn_mark", 0)),
            peak_delay_us=int(t.get("peak_delay_us", 0)),
            avg_delay_us=int(t.get("avg_delay_us", 0)),
            base_delay_us=int(t.get("base_delay_us", 0)),
        )
        for i, t in enumerate(raw)
    )


def parse_qdiscs(data: list[dict[str, Any]], dev: str | None = None) -> list[Qdisc]:
    """Parsed `tc -s -j qdisc show [dev X]` output (already json-decoded).

    `tc ... show dev X` leaves out the "dev" key: pass `dev` then.
    """
    qdiscs = []
    for q in data:
        options = q.get("options", {}) or {}
        bandwidth = options.get("bandwidth")
        qdiscs.append(Qdisc(
            dev=q.get("dev", dev or ""),
            kind=q.get("kind", ""),
            handle=q.get("handle", ""),
            root=bool(q.get("root", False)),
            bytes=int(q.get("bytes", 0)),
            packets=int(q.get("packets", 0)),
            drops=int(q.get("drops", 0)),
            backlog=int(q.get("backlog", 0)),
            qlen=int(q.get("qlen", 0)),
            bandwidth_bps=int(bandwidth) * 8 if isinstance(bandwidth, int) else None,
            options=options,
            tins=_tins(q.get("tins", []) or []),
        ))
    return qdiscs


def root_cake(qdiscs: list[Qdisc], dev: str) -> Qdisc | None:
    """The CAKE qdisc at the root of `dev`, if there is one."""
    for q in qdiscs:
        if q.dev == dev and q.root and q.is_cake:
            return q
    return None
