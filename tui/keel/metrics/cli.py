"""`keel metrics-serve [--listen ADDR]... [--port N]`: the metrics endpoint
for Prometheus (GET /metrics), a daemon `keel apply` starts with [metrics]
enabled, on the LAN's and the tunnel's addresses (every address with
on_wan). Without --listen it listens on 127.0.0.1 alone (a look by hand).

Registering imports nothing but argparse: the server and what it reads load
only when the command runs."""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from pathlib import Path

from keel.ports import METRICS_TCP

LOOPBACK = "127.0.0.1"


def run_metrics_server(addresses: list[str], port: int, latest: Path | None = None) -> int:
    """Serve until SIGTERM or SIGINT: 0; 2 for a bad address or port (nothing
    listens), 1 when no address could be bound."""
    from keel.metrics import server
    from keel.metrics.latest_point import LATEST
    from keel.metrics.scrape import Scraper, booted_slot

    try:
        wanted = server.listeners(addresses or [LOOPBACK], port)
    except server.ListenError as err:
        print(f"keel metrics-serve: {err}", file=sys.stderr)
        return 2
    socks, bound = [], []
    for listener in wanted:
        try:
            socks.append(server.open_socket(listener))
            bound.append(str(listener))
        except OSError as err:
            print(f"keel metrics-serve: cannot listen on {listener}: {err.strerror}",
                  file=sys.stderr)
    if not socks:
        return 1
    from keel.fleet.watch import read_snapshot
    from keel.metrics.exposition import EdgeSample

    def edges() -> tuple[EdgeSample, ...]:
        """A hub's edges as its watcher last found them (keel fleet watch)."""
        seen, at = read_snapshot()
        return tuple(EdgeSample(e.name, e.status, e.handshake_age_s, at) for e in seen)

    scraper = Scraper(latest=latest or LATEST, slot=booted_slot(), edges=edges)
    srv = server.Server(socks, scraper.body)
    stop = threading.Event()

    def finish(signum: int, frame: object) -> None:
        stop.set()

    previous = {sig: signal.signal(sig, finish) for sig in (signal.SIGTERM, signal.SIGINT)}
    print(f"keel metrics-serve: listening on {', '.join(bound)} (GET /metrics)",
          file=sys.stderr, flush=True)
    try:
        srv.serve(stop)
    finally:
        srv.close()
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    return 0


def _port(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError("must be a number 1..65535") from None
    if not 1 <= value <= 65535:
        raise argparse.ArgumentTypeError("must be 1..65535")
    return value


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("metrics-serve", help="serve metrics for Prometheus (GET /metrics; "
                                             "keel apply starts it with [metrics] enabled)")
    p.add_argument("--listen", action="append", default=[], metavar="ADDR",
                   help=f"an IPv4 or IPv6 address to listen on, repeatable; 0.0.0.0 and :: "
                        f"are every address (default {LOOPBACK})")
    p.add_argument("--port", type=_port, default=METRICS_TCP, metavar="N",
                   help=f"the TCP port (default {METRICS_TCP})")
    p.add_argument("--latest", type=Path, default=None, help=argparse.SUPPRESS)
    p.set_defaults(func=lambda args: run_metrics_server(args.listen, args.port, args.latest))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(prog="keel")
    register(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["metrics-serve", *sys.argv[1:]])
    sys.exit(args.func(args))
