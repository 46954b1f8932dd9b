"""`keel forwards [--json]`, `keel forwards add NAME --port P --to T ...` and
`keel forwards remove NAME`: argparse glue and the printing.

The list: each forward of the config in force with its role here, its hits
and whether its target answers (keel.forwards.collect). A change: the new
config checked by the loader first (a refusal is its message, exit 2, and
nothing is written), then written to /run/keel and applied by `keel apply`
(which writes /data/keel/keel.toml atomically once applied; --confirm rolls
it back unless `keel confirm` follows, as `keel apply --confirm` does)."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING

from keel.shown import shown

if TYPE_CHECKING:  # registering the command imports no more than this module
    from keel.config.schema import Config
    from keel.forwards.collect import ForwardRow, ForwardsSnapshot
    from keel.forwards.edit import Change

EXIT_OK, EXIT_INVALID = 0, 2
HEAD = ("name", "proto", "public", "target", "via", "role", "hits", "target status")
PROPOSED_NAME = "forwards.toml"  # under /run/keel (keel.apply.engine.RUN_DIR)


def cells(row: ForwardRow) -> tuple[str, ...]:
    """A row as text to show, every cell escaped (keel.shown)."""
    return (shown(row.name, 64), shown(row.protocol, 8), shown(row.public, 16),
            shown(row.target, 32), shown(row.via or "-", 64), shown(row.role, 8),
            "-" if row.hits is None else str(row.hits), shown(row.status, 16))


def table(rows: tuple[ForwardRow, ...] | list[ForwardRow]) -> list[str]:
    """The rows under a header, in columns (as `keel peers` prints)."""
    body = [cells(r) for r in rows]
    widths = [max(len(row[k]) for row in (HEAD, *body)) for k in range(len(HEAD))]
    return ["  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
            for row in (HEAD, *body)]


def as_json(snapshot: ForwardsSnapshot) -> str:
    return json.dumps([asdict(r) for r in snapshot.rows], indent=1)


def _list(args: argparse.Namespace) -> int:
    from keel.forwards.collect import collect_in_force

    snapshot = collect_in_force()
    if snapshot.problem:
        print(f"keel forwards: {snapshot.problem}", file=sys.stderr)
        return EXIT_INVALID
    if args.json:
        print(as_json(snapshot))
        return EXIT_OK
    if not snapshot.rows:
        print("no forwards (keel forwards add NAME --port P --to T)")
        return EXIT_OK
    print("\n".join(table(snapshot.rows)))
    if snapshot.counters_note:
        print(f"hits: unknown: {snapshot.counters_note}")
    return EXIT_OK


def _config_in_force() -> tuple[Config | None, str]:
    from keel.apply.command import config_in_force
    from keel.model.reading import InvalidConfig, read_loaded

    try:
        return read_loaded(config_in_force()).config, ""
    except InvalidConfig as err:
        return None, f"the config in force is invalid: {err.summary()}"


def propose(change: Change) -> Path:
    """Write the validated config where `keel apply` reads it (raises OSError)."""
    from keel.apply import engine

    path = engine.RUN_DIR / PROPOSED_NAME
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(change.new_text)
    return path


def apply_change(path: Path, note: str, *, confirm: int | None, dry_run: bool) -> int:
    """Apply the proposed file as `keel apply FILE` does (the user's config
    is written, atomically, only once it is applied)."""
    from keel.apply.command import cmd_apply

    return cmd_apply(path, dry_run=dry_run, confirm=confirm, boot=False, note=note)


def _change(args: argparse.Namespace) -> int:
    from keel.forwards import edit
    from keel.forwards.edit import ForwardEditError

    word = f"keel forwards {args.action}"
    config, why = _config_in_force()
    if config is None:
        print(f"{word}: {why}", file=sys.stderr)
        return EXIT_INVALID
    try:
        if args.action == "add":
            change = edit.add_forward(config, args.name, args.port, args.to, args.protocol,
                                      args.via, args.snat)
        else:
            change = edit.remove_forward(config, args.name)
    except ForwardEditError as err:
        for line in err.lines:
            print(f"{word}: {line}", file=sys.stderr)
        print(f"{word}: nothing changed", file=sys.stderr)
        return EXIT_INVALID
    print(change.said)
    for line in change.lines():
        print(f"  {line}")
    if change.forward.via and args.action == "add":
        other = ("the hub" if change.forward.via == config.system.hostname
                 else f"the edge {shown(change.forward.via, 64)}")
        print(f"  the same [[forward]] goes on {other} too (keel forwards add there)")
    try:
        path = propose(change)
    except OSError as err:
        print(f"{word}: cannot write the new config: {err.strerror or err}; nothing changed",
              file=sys.stderr)
        return 1
    return apply_change(path, f"forwards: {args.action} {change.forward.name}",
                        confirm=args.confirm, dry_run=args.dry_run)


def _confirm_seconds(text: str) -> int:
    if not text.isdigit() or not 10 <= int(text) <= 3600:
        raise argparse.ArgumentTypeError("confirm time must be 10..3600 seconds")
    return int(text)


def _applying(p: argparse.ArgumentParser) -> None:
    p.add_argument("--dry-run", action="store_true", help="print what would change")
    p.add_argument("--confirm", type=_confirm_seconds, metavar="SECONDS",
                   help="roll back unless `keel confirm` follows in time")
    p.set_defaults(func=_change)


def add_forwards_command(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("forwards", help="port forwards: list them; add or remove one",
                       description="Without an action: each [[forward]] of the config in "
                                   "force, its hits and whether its target answers.")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=_list)
    actions = p.add_subparsers(dest="action", metavar="ACTION")

    a = actions.add_parser("add", help="add a forward and apply it")
    a.add_argument("name", help="a name for it (keel forwards shows it)")
    a.add_argument("--port", required=True, metavar="P",
                   help='the public port on the hub\'s WAN, or a range like "8000-8010"')
    a.add_argument("--to", required=True, metavar="T",
                   help="the target: A.B.C.D:PORT, or A.B.C.D for the same port(s); "
                        "IPv6: [ADDR]:PORT or ADDR (not translated: the same port)")
    a.add_argument("--protocol", default="tcp", metavar="tcp|udp|both",
                   help="default: tcp")
    a.add_argument("--via", metavar="EDGE",
                   help="the edge the target is behind (on the hub: its peer name; on that "
                        "edge: its own host name); leave out for a target in this LAN")
    a.add_argument("--snat", action="store_true",
                   help="the target sees the hub's tunnel address, not the client's")
    _applying(a)

    r = actions.add_parser("remove", help="remove a forward and apply it")
    r.add_argument("name")
    _applying(r)
