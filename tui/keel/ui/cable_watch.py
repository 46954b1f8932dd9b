"""Find a port by its cable (the setup wizard's [f] and [g], as pfSense's
console assigns interfaces): the user unplugs every cable, then plugs in
the one cable of the role asked for; the port whose link came up is that
role's port.

Pure, no Textual, no system: snapshots of the ports' carrier (taken by the
screen from keel.system.nic_ports.read_ports, one every POLL_S) in, a
verdict out. The rules:

- a port came up when it was seen without carrier (no carrier, down,
  unreadable, or not there yet: a USB NIC plugged in) and has carrier in
  the latest snapshot; a port up all along (its cable never unplugged) never
  counts, one unplugged and plugged back in does;
- once a port came up the watch waits SETTLE_S more, so that a second cable
  plugged in at the same time is seen too: one port is the answer, more
  than one is refused (plug in one cable only);
- none within the timeout: refused, saying so."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from keel.parse.nic_identity import Port

POLL_S = 0.5
SETTLE_S = 2.0
TIMEOUT_S = 60.0
SNAPSHOTS_MAX = 1000  # the watch keeps no more (TIMEOUT_S / POLL_S is 120)


@dataclass(frozen=True)
class Snapshot:
    """The ports' carrier at one moment: name -> True (link), False (no
    carrier), None (unknown: the port is down or its carrier unreadable)."""

    at: float  # monotonic seconds
    carrier: Mapping[str, bool | None]


def snapshot(at: float, ports: Iterable[Port]) -> Snapshot:
    return Snapshot(at, {p.name: p.carrier for p in ports})


def came_up(snaps: Sequence[Snapshot]) -> list[str]:
    """The ports seen without carrier in some snapshot (or absent from it)
    and with carrier in the last, in the last snapshot's order."""
    if not snaps:
        return []
    last = snaps[-1].carrier
    return [name for name, on in last.items()
            if on is True and any(s.carrier.get(name) is not True for s in snaps[:-1])]


def first_up_at(snaps: Sequence[Snapshot]) -> float | None:
    """When a port that is up in the last snapshot was first seen up after
    being seen without carrier (the start of the settling); None: none came up."""
    up = came_up(snaps)
    if not up:
        return None
    times = []
    for name in up:
        off = max(i for i, s in enumerate(snaps[:-1]) if s.carrier.get(name) is not True)
        times.append(next(s.at for s in snaps[off + 1:] if s.carrier.get(name) is True))
    return min(times)


@dataclass(frozen=True)
class Verdict:
    done: bool
    port: str | None  # the port found (done and one came up)
    message: str


def judge(snaps: Sequence[Snapshot], started: float, role: str,
          timeout_s: float = TIMEOUT_S, settle_s: float = SETTLE_S) -> Verdict:
    """Where the watch for `role`'s cable ("WAN", "LAN") stands after these
    snapshots (started: when the watch began, on the snapshots' clock)."""
    now = snaps[-1].at if snaps else started
    up = came_up(snaps)
    since = first_up_at(snaps)
    settled = since is not None and now - since >= settle_s
    timed_out = now - started >= timeout_s
    if up and (settled or timed_out):
        if len(up) == 1:
            return Verdict(True, up[0], f"the {role} cable is in {up[0]}")
        return Verdict(True, None, f"links came up on {', '.join(up)}: plug in the {role} "
                                   "cable alone")
    if timed_out:
        return Verdict(True, None, f"no link came up in {timeout_s:.0f} s: is the cable in, "
                                   "the other end on?")
    if up:
        return Verdict(False, None, f"link up on {', '.join(up)}: waiting {settle_s:.0f} s "
                                    "for other cables")
    left = math.ceil(max(0.0, timeout_s - (now - started)))
    return Verdict(False, None, f"unplug all cables, then plug the {role} cable in now "
                               f"({left} s left)")
