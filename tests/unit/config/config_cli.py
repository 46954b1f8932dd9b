"""`keel config ...` run in-process, as the command line registers it."""

from __future__ import annotations

import argparse

from keel.config import cli


def run_config(argv: list[str]) -> int:
    """The exit status of `keel config` with these arguments."""
    parser = argparse.ArgumentParser(prog="keel")
    cli.add_config_commands(parser.add_subparsers(dest="command"))
    args = parser.parse_args(argv)
    return args.func(args)
