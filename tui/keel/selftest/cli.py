"""`keel selftest throughput|bufferbloat|mtu [--json]`."""

from __future__ import annotations

import argparse
import json
import signal
import sys

from keel.selftest.events import Event, Progress, SelfTestError


def _stop_on_signals() -> None:
    """A killed UI or a hung-up SSH session stops the test like Ctrl-C does."""
    def raise_interrupt(signum, _frame):
        raise KeyboardInterrupt
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, raise_interrupt)


def _printer(quiet: bool):
    last = [""]

    def report(event: Event) -> None:
        if quiet or not isinstance(event, Progress):
            return
        line = f"[{event.fraction * 100:3.0f}%] {event.text}"
        if line != last[0]:
            print(line, file=sys.stderr, flush=True)
            last[0] = line
    return report


def _peer(args):
    from keel.parse.wgdump import parse_wg_dump
    from keel.selftest.peer import find_peer
    from keel.system.commands import Runner

    proc = Runner().run(["wg", "show", "all", "dump"], check=False)
    if proc.returncode != 0:
        raise SelfTestError("no WireGuard interface: the tunnel is not set up (keel doctor)")
    return find_peer(parse_wg_dump(proc.stdout), args.peer)


def fmt_ms(value: float | None) -> str:
    return "-" if value is None or value != value else f"{value:.1f}"


def print_bufferbloat(results: list) -> None:
    header = f"{'phase':14}" + "".join(
        f"  {'(CAKE bypassed)' if r.cake_bypassed else '(with CAKE)':>37}" for r in results)
    print(header)
    print(f"{'':14}" + "  p50 / p95 / p99 ms  +p50   grade  Mbit/s" * len(results))
    for name in ("idle", "download", "upload", "bidirectional"):
        row = f"{name:14}"
        for r in results:
            p = r.phase(name)
            t = p.tunnel
            mbit = "/".join(f"{v:.1f}" for v in (p.down_mbit, p.up_mbit) if v is not None)
            row += (f"  {fmt_ms(t.p50_ms):>6}/{fmt_ms(t.p95_ms):>6}/{fmt_ms(t.p99_ms):>6}"
                    f" {fmt_ms(p.increase_p50_ms):>6} {p.grade or '':>5} {mbit:>8}")
        print(row)
    for r in results:
        label = "CAKE bypassed" if r.cake_bypassed else "with CAKE"
        print(f"{label}: grade {r.grade} (latency increase {r.increase_ms:.1f} ms), "
              f"RPM {r.rpm:.0f} ({r.rpm_label})")
    for r in results:
        for p in r.phases:
            if p.outside is not None and p.name != "idle":
                gap = p.tunnel.p50_ms - p.outside.p50_ms
                print(f"  {p.name}: outside the tunnel p50 {fmt_ms(p.outside.p50_ms)} ms; "
                      f"the tunnel adds {fmt_ms(gap)} ms")
                break


def run(args) -> int:
    _stop_on_signals()
    report = _printer(quiet=False)  # progress goes to stderr, JSON to stdout
    try:
        peer = _peer(args)
        if args.test == "throughput":
            from keel.selftest.throughput import run_throughput

            result = run_throughput(peer, seconds=args.seconds or 10, streams=args.streams,
                                    report=report)
            if args.json:
                print(json.dumps(result.as_dict(), indent=1))
                return 0
            for p in result.phases:
                cost = (f"{p.seconds_per_gigabit:.1f} CPU-s/Gbit"
                        if p.seconds_per_gigabit is not None else "-")
                busy = " ".join(f"{c} {b * 100:.0f}%" for c, b in p.core_busy.items())
                print(f"{p.name:14} down {p.down_mbit:7.1f}  up {p.up_mbit:7.1f} Mbit/s  "
                      f"retr {p.retransmits}  tunnel {cost}  ({busy})")
            if result.cpu_bound:
                print("The tunnel is CPU-bound: a core was saturated; the link may carry more.")
            print(f"Recommended CAKE rates (90 %): download {result.recommend_down_kbit} kbit/s, "
                  f"upload {result.recommend_up_kbit} kbit/s")
            return 0
        if args.test == "bufferbloat":
            from keel.selftest.bufferbloat import run_bufferbloat
            from keel.selftest.cake_bypass import cake_bypassed
            from keel.system.commands import Runner

            seconds = args.seconds or 10
            results = []
            if args.compare:
                with cake_bypassed(Runner()) as devs:
                    if not devs:
                        raise SelfTestError("--compare: no CAKE in place to bypass")
                    results.append(run_bufferbloat(peer, load_s=seconds, streams=args.streams,
                                                   report=report, cake_bypassed=True))
            results.append(run_bufferbloat(peer, load_s=seconds, streams=args.streams,
                                           report=report))
            if args.json:
                print(json.dumps([r.as_dict() for r in results], indent=1))
            else:
                print_bufferbloat(results)
            return 0
        from keel.selftest.mtu import run_mtu

        result = run_mtu(peer, args.wan, report)
        if args.json:
            print(json.dumps(result.as_dict(), indent=1))
        else:
            print(f"WAN: interface MTU {result.wan_interface_mtu}, path MTU to the peer "
                  f"{result.wan_path_mtu}")
            print(f"tunnel: interface MTU {result.tunnel_interface_mtu}, path MTU "
                  f"{result.tunnel_path_mtu}")
            if result.recommended_tunnel_mtu:
                print(f"WireGuard MTU to use: {result.recommended_tunnel_mtu}")
        return 0
    except SelfTestError as err:
        print(f"keel selftest {args.test}: {err}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"keel selftest {args.test}: interrupted; every iperf3 and ping stopped",
              file=sys.stderr)
        return 130


def add_selftest_commands(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("selftest", help="throughput, bufferbloat and MTU tests against the peer")
    p.add_argument("test", choices=["throughput", "bufferbloat", "mtu"])
    p.add_argument("--json", action="store_true")
    p.add_argument("--peer", metavar="ADDRESS", help="the peer's tunnel address")
    p.add_argument("--compare", action="store_true",
                   help="bufferbloat: run with CAKE bypassed, then with CAKE")
    p.add_argument("--seconds", type=int, help="seconds per load phase (>= 10)")
    p.add_argument("--streams", type=int, default=4)
    p.add_argument("--wan", help="mtu: the WAN interface (default: none)")
    p.set_defaults(func=run)
