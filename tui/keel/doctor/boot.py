"""`keel doctor --boot`: where the boot's time went, from the timeline
(keel.boot.timeline): each step's start, end and length on one clock
(seconds since the kernel started), a bar per step, and the milestones a
user cares about: the firewall in, forwarding on, the LAN served, the tunnel
made and its first handshake. Pure: marks in, lines or a dict out."""

from __future__ import annotations

from dataclasses import dataclass

from keel.boot.timeline import Mark
from keel.shown import shown

BAR = 30  # columns of the widest bar

# milestone -> the prefix of the mark that ends it
MILESTONES = (
    ("firewall", "apply firewall: load"),
    ("forwarding", "apply firewall: forwarding on"),
    ("LAN served", "apply dhcp-dns"),
    ("tunnel made", "apply wireguard"),
    ("first handshake", "tunnel: first handshake"),
)


@dataclass(frozen=True)
class Row:
    step: str
    start: float
    end: float

    @property
    def seconds(self) -> float:
        return max(0.0, self.end - self.start)


def rows(marks: list[Mark]) -> list[Row]:
    """Marks with their starts filled in (a mark with none starts where the
    one before it ended), sorted by start."""
    out, last_end = [], 0.0
    for m in marks:
        start = m.start if m.start is not None else last_end
        out.append(Row(m.step, start, m.end))
        last_end = m.end
    return sorted(out, key=lambda r: (r.start, -r.end))


def milestones(marks: list[Mark]) -> dict[str, float | None]:
    """When each milestone was reached (its last mark's end), and "routing":
    the latest of the firewall, forwarding and the LAN served (None: a step
    this boot did not need, or did not reach)."""
    found: dict[str, float | None] = {name: None for name, _ in MILESTONES}
    for m in marks:
        for name, prefix in MILESTONES:
            if m.step.startswith(prefix):
                found[name] = max(found[name] or 0.0, m.end)
    needed = [found[k] for k in ("firewall", "forwarding", "LAN served", "tunnel made")]
    reached = [t for t in needed if t is not None]
    found["routing"] = max(reached) if found["firewall"] is not None and reached else None
    return found


def as_dict(marks: list[Mark]) -> dict[str, object]:
    return {"steps": [{"step": r.step, "start": r.start, "end": r.end,
                       "seconds": round(r.seconds, 2)} for r in rows(marks)],
            "milestones": milestones(marks)}


def lines(marks: list[Mark]) -> list[str]:
    if not marks:
        return ["no boot timeline (/run/keel/boot.jsonl): not booted by keel's init?"]
    rs = rows(marks)
    total = max(r.end for r in rs) or 1.0
    out = [f"{'start':>6} {'end':>6} {'s':>5}  {'':{BAR}}  step"]
    for r in rs:
        a = min(BAR - 1, int(r.start / total * BAR))
        b = max(a + 1, round(r.end / total * BAR))
        bar = " " * a + "#" * (b - a)
        out.append(f"{r.start:6.2f} {r.end:6.2f} {r.seconds:5.2f}  {bar:{BAR}}  "
                   f"{shown(r.step, 60)}")
    ms = milestones(marks)
    said = [f"{name} {t:.1f} s" for name, t in ms.items() if t is not None and name != "routing"]
    out.append("milestones (seconds since the kernel started): " + (", ".join(said) or "none"))
    routing = ms["routing"]
    out.append(f"routing {routing:.1f} s after the kernel started" if routing is not None
               else "routing: keel's ruleset was not loaded this boot")
    return out
