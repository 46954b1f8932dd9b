"""`keel tui`: the console UI. Registered by keel.cli through add_tui_command."""

from __future__ import annotations

import argparse
import sys


def add_tui_command(subparsers) -> None:
    parser = subparsers.add_parser(
        "tui", help="the console UI (dashboard and self-tests)",
        description="The console UI. The console profile (16 colours, ASCII, 1 Hz, no mouse) "
                    "is chosen from TERM and the tty unless forced.")
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--console", dest="console", action="store_true", default=None,
                       help="force the console profile")
    group.add_argument("--no-console", dest="console", action="store_false",
                       help="force the modern-terminal profile")
    parser.add_argument("--fake", action="store_true",
                        help="fake live data instead of this machine's (development, benchmark)")
    parser.add_argument("--seconds", type=float, default=None,
                        help="quit after this many seconds (benchmark)")
    parser.set_defaults(func=run_tui)


def run_tui(args: argparse.Namespace) -> int:
    from keel.ui.profile import apply_environment, choose

    profile = choose(args.console)
    apply_environment(profile)  # before textual is imported
    from keel.metrics.live import fake_collectors, real_collectors
    from keel.ui.app import KeelApp
    from keel.ui.selftest import FakeSelfTestRunner

    if args.fake:
        app = KeelApp(fake_collectors(), profile, runner=FakeSelfTestRunner(delay=1.0),
                      apply_rates=lambda r: "fake: rates not applied",
                      apply_adaptive=lambda r, m: "fake: adaptive rates not applied",
                      adaptive_offer=lambda: None, quit_after=args.seconds)
    else:
        from keel.model.reading import USER_CONFIG
        from keel.ui.selftest_runner import KeelSelfTestRunner

        app = KeelApp(real_collectors(), profile, runner=KeelSelfTestRunner(),
                      quit_after=args.seconds, user_config=USER_CONFIG)
    app.run(mouse=profile.mouse)
    return app.return_code or 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="keel")
    add_tui_command(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
