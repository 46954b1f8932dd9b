"""The reflector: answers keel's delay probes (keel.adaptive.wire) that come
through a WireGuard tunnel, with this router's clock at their arrival (the
kernel's receive timestamp) and at the answer, and how late the CPU was given
back just before (the stall meter's figure: the reflector runs in its
process, so a starved peer says so in the very answer its stall delayed).

A socket per WireGuard interface, bound to it (SO_BINDTODEVICE): a probe
from anywhere else never reaches it, whatever the firewall holds. The
interfaces are looked for every RESCAN_S seconds; between probes the thread
sleeps in select(). Each peer (a source address) has its own budget of
PER_PEER_PER_S answers a second: a peer that floods gets the rest of its own
dropped, and the others are answered as before (one budget shared by all let
a flooding peer leave the others 2 answers of 29). The budgets live in a
table of at most MAX_PEERS sources a second (Budgets): a flood from ever new
source addresses fills it and is refused, it never grows."""

from __future__ import annotations

import contextlib
import select
import socket
import struct
import threading
import time
from collections.abc import Callable

from keel.adaptive import wire

RESCAN_S = 10.0
# a peer's probes: ADAPT_PROBE_HZ (10) a second, a few more when a second's
# boundary falls between two ticks; 4 times that is a flood
PER_PEER_PER_S = 40
# sources answered in one second: a hub's edges (the config's bound on
# peers, keel.config.schema.MAX_PEERS) with room for their LANs' addresses
MAX_PEERS = 8192
SO_TIMESTAMPNS = getattr(socket, "SO_TIMESTAMPNS", 35)


def wireguard_interfaces() -> dict[str, int]:
    """{name: ifindex} of the WireGuard interfaces there are now."""
    from keel.system.links import wireguard_interfaces as names

    found = {}
    for name in names():
        with contextlib.suppress(OSError):  # gone since
            found[name] = socket.if_nametoindex(name)
    return found


def arrival_ns(ancdata: list[tuple[int, int, bytes]]) -> int:
    """The kernel's receive time of a datagram (SO_TIMESTAMPNS), or now."""
    for level, kind, data in ancdata:
        if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPNS and len(data) >= 16:
            sec, nsec = struct.unpack("qq", data[:16])
            return sec * 10**9 + nsec
    return time.time_ns()


def open_socket(ifname: str, port: int = wire.PORT) -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_BINDTODEVICE, ifname.encode())
        sock.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
        sock.setblocking(False)
        sock.bind(("0.0.0.0", port))
    except OSError:
        sock.close()
        raise
    return sock


class Budgets:
    """Answers allowed per source address, counted per second of the
    monotonic clock: at most `per_peer` for each source, and at most
    `max_peers` sources in a second (a source beyond them is refused for the
    rest of that second). The table is emptied as each second begins, so it
    never holds more than `max_peers` entries."""

    def __init__(self, per_peer: int = PER_PEER_PER_S, max_peers: int = MAX_PEERS,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.per_peer, self.max_peers, self.clock = per_peer, max_peers, clock
        self.second = -1
        self.counts: dict[str, int] = {}

    def allow(self, source: str) -> bool:
        second = int(self.clock())
        if second != self.second:
            self.second, self.counts = second, {}
        count = self.counts.get(source)
        if count is None:
            if len(self.counts) >= self.max_peers:
                return False
            count = 0
        if count >= self.per_peer:
            return False
        self.counts[source] = count + 1
        return True


class Reflector:
    def __init__(self, stall_ms: Callable[[], float], *, port: int = wire.PORT,
                 find: Callable[[], dict[str, int]] = wireguard_interfaces,
                 per_peer_per_s: int = PER_PEER_PER_S, max_peers: int = MAX_PEERS) -> None:
        self.stall_ms = stall_ms
        self.port = port
        self.find = find
        self.sockets: dict[str, tuple[int, socket.socket]] = {}
        self.answered = 0
        self.refused = 0
        self.budgets = Budgets(per_peer_per_s, max_peers)

    def rescan(self) -> None:
        now = self.find()
        for name, (index, sock) in list(self.sockets.items()):
            if now.get(name) != index:
                sock.close()
                del self.sockets[name]
        for name, index in now.items():
            if name not in self.sockets:
                with contextlib.suppress(OSError):  # gone again, or the port taken
                    self.sockets[name] = (index, open_socket(name, self.port))

    def answer_one(self, sock: socket.socket) -> None:
        try:
            data, ancdata, _, addr = sock.recvmsg(wire.ANSWER_LEN, socket.CMSG_SPACE(16))
        except (BlockingIOError, InterruptedError):
            return
        received = arrival_ns(ancdata)
        try:
            probe = wire.parse_probe(data)
        except wire.WireError:
            self.refused += 1
            return
        if not self.budgets.allow(addr[0]):
            self.refused += 1
            return
        with contextlib.suppress(OSError):
            sock.sendto(wire.answer(probe, received, time.time_ns(), self.stall_ms()), addr)
            self.answered += 1

    def run(self, stop: threading.Event) -> None:
        next_scan = 0.0
        while not stop.is_set():
            now = time.monotonic()
            if now >= next_scan:
                self.rescan()
                next_scan = now + RESCAN_S
            socks = [sock for _, sock in self.sockets.values()]
            if not socks:
                stop.wait(max(next_scan - time.monotonic(), 0.0))
                continue
            try:
                ready, _, _ = select.select(socks, [], [], max(next_scan - time.monotonic(), 0))
            except (OSError, ValueError):  # a socket closed under us
                next_scan = 0.0
                continue
            for sock in ready:
                self.answer_one(sock)

    def close(self) -> None:
        for _, sock in self.sockets.values():
            sock.close()
        self.sockets.clear()


def start(stall_ms: Callable[[], float], stop: threading.Event) -> Reflector:
    """A reflector answering in a daemon thread until `stop` is set."""
    reflector = Reflector(stall_ms)
    threading.Thread(target=reflector.run, args=(stop,), daemon=True,
                     name="keel-reflector").start()
    return reflector
