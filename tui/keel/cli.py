"""The `keel` command."""

from __future__ import annotations

import argparse

from keel import __version__


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="keel", description="keel router appliance")
    parser.add_argument("--version", action="version", version=f"keel {__version__}")
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    parser.parse_args(argv)
    parser.print_help()
    return 0
