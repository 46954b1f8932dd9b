"""`keel selftest throughput|bufferbloat|mtu [--json | --events]`."""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading

from keel.selftest.events import Event, Failed, Progress, Report, SelfTestError, dumps
from keel.selftest.report import result_lines
from keel.selftest.results import TestResult


def _stop_on_signals() -> None:
    """A killed UI or a hung-up SSH session stops the test like Ctrl-C does."""
    def raise_interrupt(signum, _frame):
        raise KeyboardInterrupt
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, raise_interrupt)


def _printer(events: bool) -> Report:
    """--events: every event a JSON line on stdout; else progress on stderr."""
    if events:
        lock = threading.Lock()  # samples come from the ping reader threads

        def write(event: Event) -> None:
            line = dumps(event)
            with lock:
                print(line, flush=True)
        return write
    last = [""]

    def report(event: Event) -> None:
        if not isinstance(event, Progress):
            return
        line = f"[{event.fraction * 100:3.0f}%] {event.text}"
        if line != last[0]:
            print(line, file=sys.stderr, flush=True)
            last[0] = line
    return report


def _peer(args):
    from keel.system.source import SourceError
    from keel.wireguard.peers import NoPeer
    from keel.wireguard.target import read_probe_peer

    try:
        return read_probe_peer(tunnel_ip=args.peer)
    except SourceError:
        raise SelfTestError("no WireGuard interface: the tunnel is not set up (keel doctor)"
                            ) from None
    except NoPeer as err:
        raise SelfTestError(str(err)) from None


def _finish(args, report: Report, results: list[TestResult]) -> int:
    if args.events:
        for result in results:
            report(result)
    elif args.json:
        data = [r.as_dict() for r in results]
        print(json.dumps(data if args.test == "bufferbloat" else data[0], indent=1))
    else:
        for line in result_lines(results):
            print(line)
    return 0


def run(args) -> int:
    _stop_on_signals()
    report = _printer(args.events)  # progress on stderr, or every event on stdout
    try:
        peer = _peer(args)
        if args.test == "throughput":
            from keel.selftest.throughput import run_throughput

            return _finish(args, report, [run_throughput(
                peer, seconds=args.seconds or 10, streams=args.streams, report=report)])
        if args.test == "bufferbloat":
            from keel.selftest.bufferbloat import run_bufferbloat
            from keel.selftest.cake_bypass import cake_bypassed
            from keel.system.commands import Runner

            seconds = args.seconds or 10
            results: list[TestResult] = []
            if args.compare:
                with cake_bypassed(Runner()) as devs:
                    if not devs:
                        raise SelfTestError("--compare: no CAKE in place to bypass")
                    results.append(run_bufferbloat(peer, load_s=seconds, streams=args.streams,
                                                   report=report, cake_bypassed=True))
                if args.events:  # the bypassed run as soon as CAKE is back
                    report(results.pop())
            results.append(run_bufferbloat(peer, load_s=seconds, streams=args.streams,
                                           report=report))
            return _finish(args, report, results)
        from keel.selftest.mtu import run_mtu

        return _finish(args, report, [run_mtu(peer, args.wan, report)])
    except SelfTestError as err:
        return _fail(args, report, str(err), 1)
    except KeyboardInterrupt:
        return _fail(args, report, "interrupted; every iperf3 and ping stopped", 130)


def _fail(args, report: Report, why: str, rc: int) -> int:
    """One line on stderr; with --events the same line as a `failed` event."""
    line = f"keel selftest {args.test}: {why}"
    print(line, file=sys.stderr, flush=True)
    if args.events:
        report(Failed(args.test, line))
    return rc


def add_selftest_commands(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("selftest", help="throughput, bufferbloat and MTU tests against the peer")
    p.add_argument("test", choices=["throughput", "bufferbloat", "mtu"])
    output = p.add_mutually_exclusive_group()
    output.add_argument("--json", action="store_true", help="the results as one JSON document")
    output.add_argument("--events", action="store_true",
                        help="progress, latency samples and results as JSON Lines "
                             "(keel.selftest.events), one event a line")
    p.add_argument("--peer", metavar="ADDRESS",
                   help="the peer's tunnel address (IPv4 or IPv6)")
    p.add_argument("--compare", action="store_true",
                   help="bufferbloat: run with CAKE bypassed, then with CAKE")
    p.add_argument("--seconds", type=int, help="seconds per load phase (>= 10)")
    p.add_argument("--streams", type=int, default=4)
    p.add_argument("--wan", help="mtu: the WAN interface (default: none)")
    p.set_defaults(func=run)
