"""The history's events, each made from what changed between two looks
(pure: the daemon reads, these compare).

- boot: a boot id not seen before, with what its `keel apply --boot` applied;
- apply: another revision in force;
- upgrade: a new outcome of an upgrade (kept, rolled back, failed);
- handshake_lost / handshake_back: a peer's last handshake older than
  HANDSHAKE_STALE_S, then fresh again;
- rate_change: adaptive CAKE moved a direction's rate (its log,
  /run/keel/adapt.jsonl): one event per direction and interval, from the
  first rate to the last, with the reason of the largest cut.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from keel.history.point import MAX_TEXT, Event
from keel.metrics.snapshots import PeerStat
from keel.shown import shown
from keel.thresholds import HANDSHAKE_STALE_S

MAX_LOG_LINE = 4096  # bytes of one adapt.jsonl line read; a longer one is skipped


def boot_event(t: float, applied: str | None, fallback: bool, version: str,
               boot_id: str = "") -> Event:
    """This boot (`boot_id`: the kernel's, which tells it from the others),
    with the config its apply put in force."""
    if applied is None:
        how = "no config could be applied"
    else:
        how = f"applied {applied}" + (" (a fallback: `keel doctor` says why)" if fallback else "")
    return Event(t, "boot", f"boot of keel {version}: {how}"[:MAX_TEXT],
                 {"applied": applied, "fallback": fallback, "version": version,
                  "boot_id": boot_id})


def apply_event(t: float, before: int | None, now: int | None, note: str = "") -> Event | None:
    """Another revision in force (None: the same, or none yet)."""
    if now is None or now == before:
        return None
    text = f"revision {now} in force" + (f": {note}" if note else "")
    return Event(t, "apply", shown(text)[:MAX_TEXT], {"revision": now, "before": before})


def upgrade_event(before_at: float | None, line: str, at: float, result: str,
                  version: str) -> Event | None:
    """An upgrade's outcome not recorded yet (its `at` is new)."""
    if before_at is not None and at <= before_at:
        return None
    return Event(at, "upgrade", shown(line)[:MAX_TEXT], {"result": result, "version": version})


def peer_label(peer: PeerStat, names: Mapping[str, str]) -> str:
    name = names.get(peer.public_key)
    return shown(name) if name else f"peer {peer.public_key[:8]}"


def handshake_events(t: float, fresh_before: Mapping[str, bool], peers: Sequence[PeerStat],
                     names: Mapping[str, str] | None = None
                     ) -> tuple[list[Event], dict[str, bool]]:
    """The peers whose handshake went stale or came back since the last look,
    and each peer's state now (fresh: a handshake within HANDSHAKE_STALE_S).
    A peer seen for the first time makes no event unless it is stale after
    having been fresh; a peer never handshaken is stale."""
    names = names or {}
    events = []
    now: dict[str, bool] = {}
    for peer in peers:
        fresh = peer.handshake_age is not None and peer.handshake_age <= HANDSHAKE_STALE_S
        now[peer.public_key] = fresh
        was = fresh_before.get(peer.public_key)
        if was is None or was == fresh:
            continue
        label = peer_label(peer, names)
        if fresh:
            events.append(Event(t, "handshake_back", f"{label}: handshake back",
                                {"peer": peer.public_key}))
        else:
            age = "never" if peer.handshake_age is None else f"{peer.handshake_age:.0f} s ago"
            events.append(Event(t, "handshake_lost",
                                f"{label}: no handshake for over {HANDSHAKE_STALE_S} s "
                                f"(last {age})", {"peer": peer.public_key}))
    return events, now


@dataclass(frozen=True)
class RateLine:
    """One line of adaptive CAKE's log: a direction's rate written."""

    t: float
    way: str
    rate_kbit: int
    from_kbit: int | None
    kind: str
    reason: str


def parse_rate_lines(lines: Iterable[bytes]) -> list[RateLine]:
    """The rate changes among adapt.jsonl's lines (a line the daemon skipped a
    cut in, an error, or a line that does not parse is left out)."""
    out = []
    for raw in lines:
        if len(raw) > MAX_LOG_LINE:
            continue
        try:
            data = json.loads(raw)
        except (ValueError, RecursionError):
            continue
        if not isinstance(data, dict):
            continue
        t, way, rate, before = data.get("t"), data.get("dir"), data.get("rate_kbit"), \
            data.get("from_kbit")
        kind, reason = data.get("kind"), data.get("reason", "")
        if not (isinstance(t, int | float) and not isinstance(t, bool) and math.isfinite(t)
                and way in ("up", "down") and isinstance(rate, int)
                and not isinstance(rate, bool) and rate >= 0
                and isinstance(kind, str) and isinstance(reason, str)):
            continue
        if before is None or isinstance(before, bool) or not isinstance(before, int) \
                or before == rate:
            continue  # not a change of the rate written
        out.append(RateLine(float(t), way, rate, before, kind[:40], reason[:MAX_TEXT]))
    return out


def rate_events(lines: Sequence[RateLine]) -> list[Event]:
    """One event per direction: from its first rate to its last, how many
    changes, and the reason of the largest cut (else of the last change)."""
    events = []
    for way in ("up", "down"):
        mine = [x for x in lines if x.way == way]
        if not mine:
            continue
        first, last = mine[0], mine[-1]
        cuts = [x for x in mine if x.from_kbit is not None and x.rate_kbit < x.from_kbit]
        why = max(cuts, key=lambda x: (x.from_kbit or 0) - x.rate_kbit) if cuts else last
        n = len(mine)
        text = (f"CAKE {way}: {first.from_kbit} -> {last.rate_kbit} kbit/s"
                f"{f' ({n} changes)' if n > 1 else ''}: {shown(why.reason)}")
        events.append(Event(last.t, "rate_change", text[:MAX_TEXT],
                            {"way": way, "from_kbit": first.from_kbit,
                             "rate_kbit": last.rate_kbit, "changes": n}))
    return events
