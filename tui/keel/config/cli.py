"""`keel config check [FILE]`, `keel config example edge|hub`."""

from __future__ import annotations

import argparse
import sys
from importlib import resources
from pathlib import Path

from keel.config import paths
from keel.config.errors import ConfigError
from keel.config.load import load_file


def _check(args: argparse.Namespace) -> int:
    path = args.file or paths.in_force()
    try:
        load_file(path)
    except ConfigError as err:
        for problem in err.problems:
            print(f"{path}: {problem}", file=sys.stderr)
        return 2
    print(f"ok: {path}")
    return 0


def _example(args: argparse.Namespace) -> int:
    text = resources.files("keel.config").joinpath("examples", f"{args.name}.toml").read_text()
    sys.stdout.write(text)
    return 0


def add_config_commands(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("config", help="check the config file, print examples")
    csub = p.add_subparsers(dest="config_command", required=True)
    c = csub.add_parser("check", help="validate a config file (exit 2 if invalid)")
    c.add_argument("file", nargs="?", type=Path)
    c.set_defaults(func=_check)
    e = csub.add_parser("example", help="print an example config")
    e.add_argument("name", choices=["edge", "hub"])
    e.set_defaults(func=_example)
