"""`keel history`: what the router kept, printed.

  keel history [--since WHEN] [--until WHEN] [--json | --csv]
  keel history events [--since WHEN] [--until WHEN] [--json]
  keel history daemon        (what /etc/init.d/S42history runs)

WHEN: now, 2h or 7d (ago), 2026-11-24 or 2026-11-24T21:05 (UTC), @UNIXSECONDS. The
points come from the finest tier that still holds `--since` (10 s for two
days, 1 min for 30, 10 min for a year)."""

from __future__ import annotations

import argparse
import csv
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import IO

from keel.history.point import PATHS, WAYS, Event, Point
from keel.history.when import WhenError, parse_when
from keel.shown import shown

DEFAULT_SINCE = "1h"


def _ms(v: float | None) -> str:
    return "-" if v is None else f"{v:.1f}"


def _mbit(v: float | None, digits: int = 2) -> str:
    return "-" if v is None else f"{v / 1e6:.{digits}f}"


def _utc(t: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(t))


def _cause(p: Point) -> str:
    named = [(c, n) for c, n in p.causes.items() if c != "healthy"]
    if not named:
        return "healthy" if p.causes else "-"
    return ", ".join(f"{c} {n}s" for c, n in named[:2])


# a line a point, in 80 columns (a provider's serial console): the time of
# its start (UTC, month-day), latency in ms, rates in Mbit/s
HEADER = (f"{'UTC':<14}  {'tun p50/p95':>11}  {'out p95':>7}  {'loss':>4}  {'WAN dn/up':>11}  "
          f"{'CAKE dn/up':>10}  cause")


def point_line(p: Point) -> str:
    """One point in a line of text (at most 80 columns but for a long cause)."""
    tun, out = p.latency.get("tunnel"), p.latency.get("outside")
    lat = "-" if tun is None else f"{_ms(tun.p50_ms)}/{_ms(tun.p95_ms)}"
    loss = "-" if tun is None or tun.loss is None else f"{tun.loss * 100:.0f}%"
    down, up = p.cake.get("down"), p.cake.get("up")
    cake = "-" if down is None and up is None else (
        f"{_mbit(down.rate_kbit * 1000 if down and down.rate_kbit else None, 1)}/"
        f"{_mbit(up.rate_kbit * 1000 if up and up.rate_kbit else None, 1)}")
    wan = f"{_mbit(p.wan_rx_bps)}/{_mbit(p.wan_tx_bps)}"
    return (f"{time.strftime('%m-%d %H:%M:%S', time.gmtime(p.t - p.seconds)):<14}  "
            f"{lat:>11}  {_ms(out.p95_ms) if out else '-':>7}  {loss:>4}  {wan:>11}  "
            f"{cake:>10}  {shown(_cause(p))}")


CSV_COLUMNS = ["t", "seconds", *(f"{path}_{k}" for path in PATHS
                                 for k in ("p50_ms", "p95_ms", "max_ms", "loss", "sent")),
               "wan_rx_bps", "wan_tx_bps", "tunnel_rx_bps", "tunnel_tx_bps",
               *(f"cake_{way}_{k}" for way in WAYS
                 for k in ("rate_kbit", "throughput_bps", "drops", "marks", "backlog_bytes")),
               "stall_worst_ms", "tunnel_cpu_cores", "causes", "evidence"]


def csv_row(p: Point) -> dict[str, object]:
    row: dict[str, object] = {"t": p.t, "seconds": p.seconds, "wan_rx_bps": p.wan_rx_bps,
                              "wan_tx_bps": p.wan_tx_bps, "tunnel_rx_bps": p.tunnel_rx_bps,
                              "tunnel_tx_bps": p.tunnel_tx_bps,
                              "stall_worst_ms": p.stall_worst_ms,
                              "tunnel_cpu_cores": p.tunnel_cpu_cores,
                              "causes": " ".join(f"{c}:{n}" for c, n in p.causes.items()),
                              "evidence": shown(p.evidence)}
    for path, lat in p.latency.items():
        for k in ("p50_ms", "p95_ms", "max_ms", "loss", "sent"):
            row[f"{path}_{k}"] = getattr(lat, k)
    for way, c in p.cake.items():
        for k in ("rate_kbit", "throughput_bps", "drops", "marks", "backlog_bytes"):
            row[f"cake_{way}_{k}"] = getattr(c, k)
    return row


def print_points(points: Sequence[Point], fmt: str, out: IO[str]) -> None:
    if fmt == "json":
        json.dump([p.as_json() for p in points], out)
        out.write("\n")
    elif fmt == "csv":
        writer = csv.DictWriter(out, CSV_COLUMNS, lineterminator="\n")
        writer.writeheader()
        for p in points:
            writer.writerow(csv_row(p))
    else:
        out.write(HEADER + "\n")
        for p in points:
            out.write(point_line(p) + "\n")
        if not points:
            out.write("(nothing kept in that time)\n")


def event_line(e: Event) -> str:
    return f"{_utc(e.t)}  {shown(e.kind, 16):<15} {shown(e.text)}"


def print_events(events: Sequence[Event], fmt: str, out: IO[str]) -> None:
    if fmt == "json":
        json.dump([e.as_json() for e in events], out)
        out.write("\n")
    else:
        for e in events:
            out.write(event_line(e) + "\n")
        if not events:
            out.write("(no events in that time)\n")


def _range(args: argparse.Namespace) -> tuple[float, float]:
    now = time.time()
    since = parse_when(args.since, now)
    until = parse_when(args.until, now)
    if since > until:
        raise WhenError(f"--since {shown(args.since)} is after --until {shown(args.until)}")
    return since, until


def _open(path: Path):
    from keel.history.store import HistoryStore

    if not path.exists():
        print(f"keel history: no history yet ({path}): the history daemon starts at boot "
              "(/etc/init.d/S42history)", file=sys.stderr)
        return None
    return HistoryStore(path)


def _print(args: argparse.Namespace, what: str) -> int:
    """The store's points or events over the moments asked, in the format asked."""
    try:
        since, until = _range(args)
    except WhenError as err:
        print(f"keel history: {err}", file=sys.stderr)
        return 2
    store = _open(args.store)
    if store is None:
        return 1
    with store:
        if what == "events":
            print_events(store.events(since, until), args.format, sys.stdout)
        else:
            print_points(store.points(since, until), args.format, sys.stdout)
    return 0


def _points(args: argparse.Namespace) -> int:
    return _print(args, "points")


def _events(args: argparse.Namespace) -> int:
    return _print(args, "events")


def _daemon(args: argparse.Namespace) -> int:
    from keel.history.daemon import main

    return main(["--store", str(args.store)])


def _when_options(p: argparse.ArgumentParser, store: Path) -> None:
    p.add_argument("--since", default=DEFAULT_SINCE,
                   help="from when: 2h, 7d (ago), 2026-11-24T21:05 (UTC) (default 1h)")
    p.add_argument("--until", default="now", help="until when (default now)")
    p.add_argument("--store", type=Path, default=store, metavar="PATH",
                   help=f"the history file (default {store}; a copy taken off a router reads "
                        "the same)")


def add_history_command(sub: argparse._SubParsersAction) -> None:
    from keel.history.store import DEFAULT_PATH

    p = sub.add_parser("history", help="what the router kept: latency, rates, causes, events",
                       description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.set_defaults(func=_points, format="text")
    _when_options(p, DEFAULT_PATH)
    how = p.add_mutually_exclusive_group()
    how.add_argument("--json", dest="format", action="store_const", const="json")
    how.add_argument("--csv", dest="format", action="store_const", const="csv")
    inner = p.add_subparsers(dest="history_command", metavar="{events,daemon}")
    e = inner.add_parser("events", help="boots, applies, upgrades, handshakes, rate changes")
    _when_options(e, DEFAULT_PATH)
    e.add_argument("--json", dest="format", action="store_const", const="json")
    e.set_defaults(func=_events, format="text")
    d = inner.add_parser("daemon", help="keep the history (run at boot)")
    d.add_argument("--store", type=Path, default=DEFAULT_PATH, metavar="PATH")
    d.set_defaults(func=_daemon)
