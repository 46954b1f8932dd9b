"""`keel config check [FILE]`, `keel config show [FILE]`, `keel config example
edge|hub`. Exit status 2 when the file is invalid (nothing is changed)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from keel.config import paths
from keel.config.dump import to_toml
from keel.config.errors import ConfigError
from keel.config.load import read_config

EXIT_INVALID = 2


def _check(args: argparse.Namespace) -> int:
    path = args.file or paths.in_force()
    try:
        loaded = read_config(path)
    except ConfigError as err:
        print("\n".join(err.lines()))
        return EXIT_INVALID
    for line in loaded.warning_lines():
        print(line)
    print(f"ok: {path}")
    return 0


def _show(args: argparse.Namespace) -> int:
    path = args.file or paths.in_force()
    try:
        loaded = read_config(path)
    except ConfigError as err:
        print("\n".join(err.lines()), file=sys.stderr)
        return EXIT_INVALID
    for line in loaded.warning_lines():
        print(line, file=sys.stderr)
    sys.stdout.write(f"# {path}, every key with its value in force\n" + to_toml(loaded.config))
    return 0


def _example(args: argparse.Namespace) -> int:
    sys.stdout.write(paths.example_text(args.name))
    return 0


def add_config_commands(subparsers: Any) -> None:
    """Register `config check|show|example` on the `keel` command's subparsers."""
    p = subparsers.add_parser("config", help="check the config file, show it, print examples")
    sub = p.add_subparsers(dest="config_command", metavar="check|show|example", required=True)
    c = sub.add_parser("check", help="validate a config file (exit status 2 if invalid)")
    c.add_argument("file", nargs="?", type=Path,
                   help=f"default: {paths.USER} if it exists, else {paths.DEFAULT}")
    c.set_defaults(func=_check)
    s = sub.add_parser("show", help="print the config with every default filled in")
    s.add_argument("file", nargs="?", type=Path,
                   help=f"default: {paths.USER} if it exists, else {paths.DEFAULT}")
    s.set_defaults(func=_show)
    e = sub.add_parser("example", help="print an example config")
    e.add_argument("name", choices=paths.EXAMPLES)
    e.set_defaults(func=_example)
