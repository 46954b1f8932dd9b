"""The hub's cost per edge: simulated edges on this host (each an agent of
keel.fleet.agent on loopback, in the metrics server's limits, answering a
full status), asked by the hub's poll as `keel fleet` and the metrics
endpoint's poller ask them; then projected to 200 edges.

  python -m bench.fleet [--edges N] [--polls P]

Per poll: the hub's CPU (its process: the asks, the parsing of each reply,
the rows), the wall time, and the bytes each way. The edges' own CPU is
theirs, not the hub's, and is left out (they run in another process).
Figures, never pass/fail."""

from __future__ import annotations

import argparse
import base64
import dataclasses
import multiprocessing
import resource
import socket
import threading
import time

from keel.config import paths
from keel.config.load import parse_config
from keel.config.schema import Config
from keel.fleet import agent, hub, wire
from keel.metrics.server import Server
from keel.pair import settle
from keel.pair.messages import EdgeOffer
from keel.pair.peers import PeerRow

STATUS = wire.Status(
    name="edge-00", version="0.1.0+g2194da6", at=1.8e9, uptime_s=86_400.0, slot="A",
    last_upgrade=wire.Upgrade("kept", "0.1.0+g2194da6", "", 1.79e9), tunnel_p95_ms=14.2,
    outside_p95_ms=9.8, loss=0.0, day_p95_ms=61.5, cake_up_kbit=18_000, cake_down_kbit=95_000,
    verdict="the line is bloated: +42 ms under load", causes=("bloat",),
    routes=tuple(f"192.168.{n}.0/24" for n in range(8)))
KEY = "HlOu1tgN6jIPCqo/B9y+b7TT1bltyagEMGZGjSZNPVI="


def cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def edges_process(count: int, ports, ready) -> None:
    """`count` agents in this (another) process, their ports handed back."""
    stop = threading.Event()
    for n in range(count):
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        sock.listen(64)
        ports.append(sock.getsockname()[1])
        status = dataclasses.replace(STATUS, name=f"edge-{n:02d}")
        a = agent.Agent(lambda s=status: s, lambda routes: routes, lambda line: None)
        server = Server([sock], lambda: b"", lambda line: None, max_connections=64,
                        max_per_client=64, handle=a.handle)
        threading.Thread(target=server.serve, args=(stop, 0.05), daemon=True).start()
    ready.set()
    stop.wait()


def hub_config(count: int) -> Config:
    """The shipped hub example with `count` edges paired (pairing's own rule)."""
    config = parse_config(paths.example_text("hub")).config
    config = dataclasses.replace(config, wireguard=dataclasses.replace(
        config.wireguard, peer=(), address=("10.77.0.1/16",)))
    for n in range(count):
        key = base64.b64encode(bytes([n + 1]) * 32).decode()
        offer = EdgeOffer(f"edge-{n:02d}", key, f"192.168.{n}.0/24", "x")
        config, _ = settle.hub_admit(config, offer, KEY)
    return config


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--edges", type=int, default=20)
    parser.add_argument("--polls", type=int, default=20)
    args = parser.parse_args()
    manager = multiprocessing.Manager()
    ports, ready = manager.list(), manager.Event()
    proc = multiprocessing.Process(target=edges_process, args=(args.edges, ports, ready),
                                   daemon=True)
    proc.start()
    ready.wait(30)
    config = hub_config(args.edges)
    by_address = {e.address: ports[i] for i, e in enumerate(hub.fleet_edges(config))}
    sent = received = 0

    def asker(address: str, request: bytes) -> bytes:
        nonlocal sent, received
        reply = hub.ask("127.0.0.1", request, 15, port=by_address[address])
        sent += len(request)
        received += len(reply)
        return reply

    peers = [PeerRow(e.name, e.address, "-", 10.0, (), e.public_key)
             for e in hub.fleet_edges(config)]
    hub.poll(config, peers, time.time(), asker)  # warm: imports, first connections
    sent = received = 0
    began_cpu, began = cpu(), time.monotonic()
    for _ in range(args.polls):
        rows = hub.poll(config, peers, time.time(), asker)
        assert all(r.status is not None for r in rows), [r.error for r in rows if r.error]
    used, took = cpu() - began_cpu, time.monotonic() - began
    proc.terminate()
    per_edge_ms = used / args.polls / args.edges * 1000
    per_poll_s = took / args.polls
    print(f"{args.edges} simulated edges on loopback, {args.polls} polls")
    print(f"  hub CPU per poll: {used / args.polls * 1000:.1f} ms "
          f"({per_edge_ms:.2f} ms an edge); wall {per_poll_s * 1000:.0f} ms a poll")
    print(f"  bytes per poll: {sent / args.polls:.0f} sent, {received / args.polls:.0f} "
          f"received ({received / args.polls / args.edges:.0f} an edge's reply)")
    every = hub.POLL_EVERY_S
    projected = per_edge_ms * 200 / 1000
    print(f"  projected to 200 edges, one poll every {every:.0f} s: {projected * 1000:.0f} ms "
          f"of CPU a poll, {projected / every * 100:.2f} % of one core; "
          f"{received / args.polls / args.edges * 200 / every / 1000:.1f} kB/s in")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
