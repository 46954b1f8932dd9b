"""`keel stall-meter [--out PATH] [--seconds N]`: run the stall meter, one JSON
line per second appended to PATH (default /run/keel/stall.jsonl)."""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from pathlib import Path

from keel.stall import meter
from keel.stall.store import DEFAULT_PATH, StallLog


def run_stall_meter(out: Path, seconds: int | None, realtime: bool = True,
                    period: float = meter.PERIOD, reflect: bool = False) -> int:
    log = StallLog(out)
    stop = threading.Event()

    def finish(signum: int, frame: object) -> None:
        stop.set()

    previous = {sig: signal.signal(sig, finish) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        got_realtime = meter.run(log.append, seconds=seconds, stop=stop, realtime=realtime,
                                 period=period, reflect=reflect)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    if realtime and not got_realtime:
        print("keel stall-meter: no SCHED_FIFO (not permitted): ran at normal priority, "
              "so busy processes count as stalls", file=sys.stderr)
    return 0


def _positive(text: str) -> int:
    value = int(text)
    if value <= 0:
        raise argparse.ArgumentTypeError("must be a positive number of seconds")
    return value


def _period_ms(text: str) -> float:
    value = float(text)
    if not 1 <= value <= 100:
        raise argparse.ArgumentTypeError("the period must be 1..100 ms")
    return value


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("stall-meter",
                       help="measure how late the CPU is given back (VPS starvation)")
    p.add_argument("--out", type=Path, default=DEFAULT_PATH, metavar="PATH",
                   help=f"JSON lines, one per second (default {DEFAULT_PATH})")
    p.add_argument("--seconds", type=_positive, default=None, metavar="N",
                   help="stop after N seconds (default: run until SIGTERM/SIGINT)")
    p.add_argument("--no-realtime", action="store_true",
                   help="do not ask for SCHED_FIFO priority")
    p.add_argument("--period-ms", type=_period_ms, default=meter.PERIOD * 1000, metavar="MS",
                   help=f"sleep per sample (default {meter.PERIOD * 1000:.0f}; longer costs "
                        "less, resolves less)")
    p.add_argument("--reflect", action="store_true",
                   help="also answer keel's delay probes that come through a WireGuard "
                        "tunnel (UDP 51821; adaptive CAKE on the peer uses them)")
    p.set_defaults(func=lambda args: run_stall_meter(args.out, args.seconds,
                                                     not args.no_realtime,
                                                     args.period_ms / 1000, args.reflect))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(prog="keel")
    register(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["stall-meter", *sys.argv[1:]])
    sys.exit(args.func(args))
