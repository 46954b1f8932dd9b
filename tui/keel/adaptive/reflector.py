"""The reflector: answers keel's delay probes (keel.adaptive.wire) that come
through a WireGuard tunnel, with this router's clock at their arrival (the
kernel's receive timestamp) and at the answer, and how late the CPU was given
back just before (the stall meter's figure: the reflector runs in its
process, so a starved peer says so in the very answer its stall delayed).

A socket per WireGuard interface, bound to it (SO_BINDTODEVICE): a probe
from anywhere else never reaches it, whatever the firewall holds. The
interfaces are looked for every RESCAN_S seconds; between probes the thread
sleeps in select(). At most MAX_PER_S answers a second in all: a peer that
floods gets the rest dropped."""

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
MAX_PER_S = 200
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


class Reflector:
    def __init__(self, stall_ms: Callable[[], float], *, port: int = wire.PORT,
                 find: Callable[[], dict[str, int]] = wireguard_interfaces,
                 max_per_s: int = MAX_PER_S) -> None:
        self.stall_ms = stall_ms
        self.port = port
        self.find = find
        self.max_per_s = max_per_s
        self.sockets: dict[str, tuple[int, socket.socket]] = {}
        self.answered = 0
        self.refused = 0
        self._window = (0, 0)  # (second, answers in it)

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

    def _allowed(self) -> bool:
        second = int(time.monotonic())
        start, count = self._window
        if start != second:
            start, count = second, 0
        if count >= self.max_per_s:
            return False
        self._window = (start, count + 1)
        return True

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
        if not self._allowed():
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
