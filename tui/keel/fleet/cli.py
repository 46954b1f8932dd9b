"""`keel fleet [--json]` (the hub: every edge's health), `keel fleet sync`
(the hub: every edge given the routes to the others' LANs; pairing and
unpairing run it), `keel fleet upgrade BUNDLE` (the hub: a staged upgrade of
its edges, keel.fleet.rollout) and `keel fleet agent` (the edge: answers its
hub; keel apply starts it)."""

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
        from keel.fleet.rollout import read_state

        print("\n".join(hub.lines(rows, now)))
        if (state := read_state()) is not None:
            print("\n".join(["", *state.lines()]))
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


def run_upgrade(target: str | None, first: str | None, group: int, tunnel_wait: int) -> int:
    from keel.fleet import rollout
    from keel.upgrade.system import UpgradeError
    from keel.upgrade.target import TargetError

    if not target:
        print("keel fleet upgrade: which bundle? keel fleet upgrade FILE|URL", file=sys.stderr)
        return 2
    said: dict[str, tuple[str, int]] = {}

    def show(state: rollout.Rollout) -> None:
        """A line per edge whose phase changed (sending: every 10 %), the
        verdict at the end."""
        for step in state.steps:
            mark = (step.phase, (step.percent or 0) // 10)
            if said.get(step.name) != mark:
                said[step.name] = mark
                print(step.line(), flush=True)
        if state.ended:
            print(f"keel fleet upgrade: {shown(state.verdict, 300)}", flush=True)

    try:
        result = rollout.upgrade(target, first, group, tunnel_wait, show)
    except (rollout.RolloutError, TargetError, UpgradeError) as err:
        print(f"keel fleet upgrade: {err}", file=sys.stderr)
        return 2
    return 0 if result.ok else 1


def _address(text: str) -> str:
    try:
        return str(ipaddress.ip_address(text))
    except ValueError:
        raise argparse.ArgumentTypeError("not an IP address") from None


def add_fleet_command(sub: argparse._SubParsersAction) -> None:
    from keel.fleet.rollout import DEFAULT_GROUP
    from keel.thresholds import UPGRADE_HANDSHAKE_WAIT_S

    p = sub.add_parser("fleet", help="(hub) every edge's health; sync: give the edges the "
                                     "routes to each other's LANs; upgrade: a staged upgrade",
                       description="On a hub: each edge (a peer paired with keel pair) asked "
                                   "through the tunnel for its health. `keel fleet sync` gives "
                                   "every edge the routes to the other edges' LANs. `keel fleet "
                                   "upgrade FILE|URL` sends a bundle to one edge first, waits "
                                   "for its health gate to keep it, then the rest in groups; "
                                   "any edge that refuses it or rolls back stops the rollout.")
    p.add_argument("action", nargs="?", choices=["list", "sync", "upgrade", "agent", "watch"],
                   default="list")
    p.add_argument("bundle", nargs="?", metavar="FILE|URL", help="upgrade: the bundle")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument("--first", metavar="EDGE",
                   help="upgrade: this edge first, alone (else the peer with upgrade_first)")
    p.add_argument("--group", type=int, default=DEFAULT_GROUP, metavar="N",
                   help=f"upgrade: edges upgraded side by side after the first "
                        f"(default {DEFAULT_GROUP})")
    p.add_argument("--tunnel-wait", type=int, default=UPGRADE_HANDSHAKE_WAIT_S, metavar="S",
                   help="upgrade: as keel upgrade --tunnel-wait, on each edge")
    p.add_argument("--listen", type=_address, help=argparse.SUPPRESS)  # agent: keel apply
    p.add_argument("--hub", type=_address, help=argparse.SUPPRESS)
    p.add_argument("--device", help=argparse.SUPPRESS)
    p.add_argument("--port", type=int, default=FLEET_TCP, help=argparse.SUPPRESS)

    def run(args: argparse.Namespace) -> int:
        if args.action == "sync":
            return run_sync()
        if args.action == "upgrade":
            return run_upgrade(args.bundle, args.first, args.group, args.tunnel_wait)
        if args.bundle is not None:
            print(f"keel fleet {args.action}: takes no {shown(args.bundle, 64)}", file=sys.stderr)
            return 2
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
