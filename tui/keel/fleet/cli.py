"""`keel fleet [--json]` (the hub: every edge's health), `keel fleet sync`
(the hub: every edge given the routes to the others' LANs; pairing and
unpairing run it) and `keel fleet agent` (the edge: answers its hub; keel
apply starts it)."""

from __future__ import annotations

import argparse
import ipaddress
import json
import sys

from keel.ports import FLEET_TCP
from keel.shown import shown


def run_fleet(as_json: bool) -> int:
    from keel.fleet import hub

    rows, now, problem = hub.look()
    if problem:
        print(f"keel fleet: {problem}", file=sys.stderr)
        if not rows:
            return 2
    if as_json:
        print(json.dumps([r.as_json(now) for r in rows], indent=1))
    else:
        print("\n".join(hub.lines(rows, now)))
    return 0 if all(r.status is not None for r in rows) else 1


def run_sync() -> int:
    from keel.fleet import hub

    results, problem = hub.sync_in_force()
    if problem:
        print(f"keel fleet sync: {problem}", file=sys.stderr)
        return 2
    for r in results:
        routes = ", ".join(r.routes) or "none"
        if r.error:
            print(f"{shown(r.name, 64)}: NOT given its routes ({routes}): {shown(r.error, 200)}")
        else:
            print(f"{shown(r.name, 64)}: routes {routes}")
    if not results:
        print("no edges (keel pair)")
    return 0 if all(not r.error for r in results) else 1


def _address(text: str) -> str:
    try:
        return str(ipaddress.ip_address(text))
    except ValueError:
        raise argparse.ArgumentTypeError("not an IP address") from None


def add_fleet_command(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("fleet", help="(hub) every edge's health; sync: give the edges the "
                                     "routes to each other's LANs",
                       description="On a hub: each edge (a peer paired with keel pair) asked "
                                   "through the tunnel for its health. `keel fleet sync` gives "
                                   "every edge the routes to the other edges' LANs.")
    p.add_argument("action", nargs="?", choices=["list", "sync", "agent", "watch"],
                   default="list")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument("--listen", type=_address, help=argparse.SUPPRESS)  # agent: keel apply
    p.add_argument("--hub", type=_address, help=argparse.SUPPRESS)
    p.add_argument("--device", help=argparse.SUPPRESS)
    p.add_argument("--port", type=int, default=FLEET_TCP, help=argparse.SUPPRESS)

    def run(args: argparse.Namespace) -> int:
        if args.action == "sync":
            return run_sync()
        if args.action == "watch":
            from keel.fleet.watch import run_watch

            return run_watch()
        if args.action == "agent":
            from keel.fleet.agent import serve

            if not (args.listen and args.hub and args.device):
                print("keel fleet agent: --listen, --hub and --device are needed "
                      "(keel apply gives them)", file=sys.stderr)
                return 2
            return serve(args.listen, args.port, args.hub, args.device)
        return run_fleet(args.json)

    p.set_defaults(func=run)
