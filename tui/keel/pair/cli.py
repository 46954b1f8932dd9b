"""`keel pair` and `keel peers`: argparse glue. Each failure is one line on
stderr and exit 1 (2 for a bad code or address as typed); nothing changed."""

from __future__ import annotations

import argparse
import getpass
import json
import sys
import time
from pathlib import Path

from keel.pair.errors import PairError
from keel.shown import shown


def _wait_seconds(text: str) -> int:
    if not text.isdigit() or not 1 <= int(text) <= 600:
        raise argparse.ArgumentTypeError(f"{text!r}: whole seconds, 1 to 600")
    return int(text)


def _pair(args: argparse.Namespace) -> int:
    from keel.apply.errors import InvalidConfig
    from keel.pair import run
    from keel.system.commands import CommandError
    from keel.wireguard.keys import KeyFileError

    try:
        if args.hub is None:
            return run.pair_hub(wait_s=args.wait, allow_public=tuple(args.allow_public))
        code = args.code if args.code is not None else getpass.getpass("code: ")
        return run.pair_edge(args.hub, code, allow_public=tuple(args.allow_public))
    except (PairError, InvalidConfig, KeyFileError, CommandError) as err:
        print(f"keel pair: {err}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("keel pair: stopped; nothing changed", file=sys.stderr)
        return 1
    except Exception as err:  # no traceback: one line (a bug of keel's, if it comes to this)
        print(f"keel pair: ended by an unexpected error ({type(err).__name__}: "
              f"{shown(err, limit=200)})", file=sys.stderr)
        return 1


def _public_prefix(text: str) -> str:
    """A prefix the hub's operator lets an edge claim as its LAN."""
    import ipaddress

    from keel.config import checks

    if (why := checks.prefix(text)):
        raise argparse.ArgumentTypeError(f"{shown(text, limit=60)}: {why}")
    return str(ipaddress.ip_network(text))


def _peers(args: argparse.Namespace) -> int:
    from keel.apply.command import cmd_apply
    from keel.apply.errors import InvalidConfig
    from keel.config.dump import to_toml
    from keel.model.reading import config_in_force, read_loaded
    from keel.pair import peers, settle
    from keel.system.source import SourceError
    from keel.system.wireguard import read_wireguard

    try:
        config = read_loaded(config_in_force()).config
    except InvalidConfig as err:
        print(f"keel peers: {err}", file=sys.stderr)
        return 2
    if args.action == "remove":
        try:
            new = settle.remove_peer(config, args.name)
        except PairError as err:
            print(f"keel peers remove: {err}", file=sys.stderr)
            return 1
        path = Path("/run/keel/unpaired.toml")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(to_toml(new))
        code = cmd_apply(path, dry_run=False, confirm=None, boot=False,
                         note=f"unpair: {args.name}")
        if code == 0:
            from keel.fleet.background import sync_soon

            sync_soon()  # the other edges forget its LAN
        return code
    try:
        live = read_wireguard()
    except SourceError:
        live = {}
    rows = peers.peer_rows(config, live, time.time())
    if args.json:
        print(json.dumps([{"name": r.name, "tunnel": r.tunnel, "endpoint": r.endpoint,
                           "handshake_age_s": r.handshake_age_s, "routes": list(r.routes),
                           "public_key": r.public_key} for r in rows], indent=1))
    elif not rows:
        print("no peers (keel pair)")
    else:
        print("\n".join(peers.table(rows)))
    return 0


def add_pair_commands(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "pair", help="set up the tunnel with another keel router from a one-time code",
        description="On the hub: `keel pair` shows a code and waits 10 min for one edge. "
                    "On the edge: `keel pair HUB CODE` (the code is asked for when left out).")
    p.add_argument("hub", nargs="?", metavar="HUB[:PORT]", help="the hub's address (edge)")
    p.add_argument("code", nargs="?", help="the code the hub shows (edge)")
    p.add_argument("--wait", type=_wait_seconds, default=600, metavar="SECONDS",
                   help="how long the code waits for the edge (hub; 1-600, default 600)")
    p.add_argument("--allow-public", action="append", default=[], type=_public_prefix,
                   metavar="PREFIX",
                   help="(hub) let the edge claim this public prefix as its LAN; without it "
                        "only private ones (RFC 1918, 100.64.0.0/10, ULA) of /16-/30 "
                        "(IPv6 /48-/64) are taken. (edge) take this public prefix as a "
                        "route from the hub's grant; without it only private ones are")
    p.set_defaults(func=_pair)

    p = sub.add_parser("peers", help="the tunnel's peers; remove NAME unpairs one")
    p.add_argument("action", nargs="?", choices=["list", "remove"], default="list")
    p.add_argument("name", nargs="?", help="the peer to remove")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=_peers)
