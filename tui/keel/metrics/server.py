"""The metrics endpoint's server: `keel metrics-serve` listens on the
addresses it is given and answers each connection with one response
(keel.metrics.http), in a thread of its own.

Its limits, so that no client holds it or makes it work much:
- the request's head (its line and headers) in MAX_HEAD bytes and within
  HEAD_TIMEOUT_S of the connection, however slowly it trickles in (a
  slowloris is answered 408 and closed);
- at most MAX_CONNECTIONS connections at once, MAX_PER_CLIENT of them from
  one address; one more is answered 503 at once and closed, unread;
- the response written within WRITE_TIMEOUT_S;
- one scrape a MIN_INTERVAL_S at most: a body younger than that is sent
  again (keel.metrics.scrape), so a flood of requests starts no more `wg`
  and `tc` than one a second.
Nothing a client sends is written back or logged."""

from __future__ import annotations

import ipaddress
import selectors
import socket
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from keel.metrics import http
from keel.metrics.exposition import CONTENT_TYPE
from keel.shown import shown

HEAD_TIMEOUT_S = 5.0
WRITE_TIMEOUT_S = 10.0
MAX_CONNECTIONS = 4
MAX_PER_CLIENT = 2
MAX_REFUSING = 16  # 503s lingering at once; past it a refusal is a bare close
BACKLOG = 16
RECV = 4096
LINGER_S = 0.5  # after the response: what the client still sends, read this long ...
LINGER_BYTES = 64 * 1024  # ... and this much at most
# Linux: bind an address that is not (yet) on an interface; the LAN's NIC
# may come later, and the socket then takes its connections
IP_FREEBIND = getattr(socket, "IP_FREEBIND", 15)
WILDCARDS = ("0.0.0.0", "::")


class ListenError(ValueError):
    """A --listen address that cannot be served: which, and why."""


@dataclass(frozen=True)
class Listener:
    address: str
    port: int

    @property
    def family(self) -> socket.AddressFamily:
        return socket.AF_INET6 if ":" in self.address else socket.AF_INET

    def __str__(self) -> str:
        return f"[{self.address}]:{self.port}" if ":" in self.address else \
            f"{self.address}:{self.port}"


def listeners(addresses: Sequence[str], port: int) -> list[Listener]:
    """The addresses to listen on, checked: IP literals (IPv4, IPv6 without
    a zone), each once, none that its family's wildcard (0.0.0.0, ::)
    given beside it covers. Raises ListenError naming the address."""
    if not 1 <= port <= 65535:
        raise ListenError(f"--port {port}: not 1..65535")
    out: list[Listener] = []
    for text in addresses:
        try:
            addr = ipaddress.ip_address(text)
        except ValueError:
            addr = None
        if addr is None or getattr(addr, "scope_id", None):
            raise ListenError(f"--listen {shown(text, 60)}: not an IPv4 or IPv6 address "
                              "(no names, no zone)")
        canonical = str(addr)
        if canonical in (a.address for a in out):
            raise ListenError(f"--listen {canonical}: given twice")
        out.append(Listener(canonical, port))
    for wildcard in WILDCARDS:
        if wildcard in (a.address for a in out):
            family = Listener(wildcard, port).family
            covered = [a.address for a in out if a.family == family and a.address != wildcard]
            if covered:
                raise ListenError(f"--listen {covered[0]}: {wildcard} listens there already")
    return out


def open_socket(listener: Listener) -> socket.socket:
    """A listening socket (raises OSError)."""
    sock = socket.socket(listener.family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if listener.family == socket.AF_INET6:
            sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
        sock.setsockopt(socket.SOL_IP, IP_FREEBIND, 1)
        sock.bind((listener.address, listener.port))
        sock.listen(BACKLOG)
    except OSError:
        sock.close()
        raise
    return sock


def read_head(conn: socket.socket, timeout_s: float = HEAD_TIMEOUT_S,
              clock: Callable[[], float] = time.monotonic) -> bytes | None:
    """The request's head as it came (its blank line included), at most
    MAX_HEAD + 1 bytes (more is too long), or what came before the client
    stopped sending; None when the whole head did not come in time."""
    deadline = clock() + timeout_s
    data = b""
    while http.head_end(data) is None and len(data) <= http.MAX_HEAD:
        left = deadline - clock()
        if left <= 0:
            return None
        conn.settimeout(left)
        try:
            chunk = conn.recv(RECV)
        except TimeoutError:
            return None
        if not chunk:
            break
        data += chunk
    end = http.head_end(data)
    return data[:end] if end is not None and end <= http.MAX_HEAD else data


def answer(conn: socket.socket, body: Callable[[], bytes], say: Callable[[str], None],
           head_timeout_s: float = HEAD_TIMEOUT_S) -> int | None:
    """Read one request from `conn` and answer it: the status sent, or None
    when nothing was (the client sent nothing, or went away)."""
    try:
        head = read_head(conn, head_timeout_s)
    except OSError:
        return None
    if head is None:
        status, reply = 408, http.response(408)
    elif not head:
        return None
    else:
        req = http.judge(head) if http.head_end(head) is not None or len(head) > http.MAX_HEAD \
            else http.Request(400)  # the client stopped in the middle of its head
        status = req.status
        if status != 200:
            reply = http.response(status)
        elif req.path == "/":
            reply = http.response(200, http.INDEX, head_only=req.method == "HEAD")
        else:
            try:
                reply = http.response(200, body(), CONTENT_TYPE, head_only=req.method == "HEAD")
            except Exception as err:  # a bug of the scrape's: said, served as 500, not fatal
                say(f"keel metrics-serve: the scrape failed: {type(err).__name__}: "
                    f"{shown(err, 200)}")
                status, reply = 500, http.response(500)
    try:
        conn.settimeout(WRITE_TIMEOUT_S)
        conn.sendall(reply)
        _linger(conn)
    except OSError:
        return None
    return status


def _linger(conn: socket.socket) -> None:
    """The response sent, the rest of what the client sent is read (a
    little, briefly) before the close: closing with unread bytes resets the
    connection, and the client may lose the response."""
    conn.shutdown(socket.SHUT_WR)
    deadline = time.monotonic() + LINGER_S
    drained = 0
    while drained < LINGER_BYTES and (left := deadline - time.monotonic()) > 0:
        conn.settimeout(left)
        try:
            chunk = conn.recv(RECV)
        except TimeoutError:
            return
        if not chunk:
            return
        drained += len(chunk)


class Server:
    """Listens on its sockets until `stop` is set; each connection is
    answered in a thread of its own, within the limits above."""

    def __init__(self, socks: Sequence[socket.socket], body: Callable[[], bytes],
                 say: Callable[[str], None] | None = None,
                 max_connections: int = MAX_CONNECTIONS,
                 max_per_client: int = MAX_PER_CLIENT,
                 head_timeout_s: float = HEAD_TIMEOUT_S,
                 handle: Callable[[socket.socket], int | None] | None = None,
                 admits: Callable[[str], bool] | None = None) -> None:
        """`handle`: answers one connection in place of the metrics' HTTP (the
        fleet channel's; the status sent, None for none); `admits`: whether a
        client address is served at all (else closed at once, unread)."""
        self.socks, self.body = list(socks), body
        self.handle = handle or (lambda conn: answer(conn, self.body, self.say,
                                                     self.head_timeout_s))
        self.admits = admits or (lambda client: True)
        self.head_timeout_s = head_timeout_s
        self.say = say or (lambda line: print(line, file=sys.stderr, flush=True))
        self.max_connections, self.max_per_client = max_connections, max_per_client
        self._lock = threading.Lock()
        self._by_client: dict[str, int] = {}
        self._open = 0
        self._refusing = threading.BoundedSemaphore(MAX_REFUSING)
        self.answered: dict[int, int] = {}  # status -> count (tests, and a look with a debugger)

    def _admit(self, client: str) -> bool:
        with self._lock:
            if self._open >= self.max_connections or \
                    self._by_client.get(client, 0) >= self.max_per_client:
                return False
            self._open += 1
            self._by_client[client] = self._by_client.get(client, 0) + 1
            return True

    def _release(self, client: str) -> None:
        with self._lock:
            self._open -= 1
            self._by_client[client] -= 1
            if not self._by_client[client]:
                del self._by_client[client]

    def _count(self, status: int | None) -> None:
        if status is not None:
            with self._lock:
                self.answered[status] = self.answered.get(status, 0) + 1

    def _serve(self, conn: socket.socket, client: str) -> None:
        try:
            self._count(self.handle(conn))
        finally:
            conn.close()
            self._release(client)

    def _refuse(self, conn: socket.socket) -> None:
        """Too many at once: 503, sent without waiting, and closed unread;
        in a thread that lingers a moment (so the client gets the 503, not a
        reset) while fewer than MAX_REFUSING do, else at once."""
        try:
            conn.setblocking(False)
            conn.send(http.response(503))
            self._count(503)
        except OSError:
            conn.close()
            return
        if not self._refusing.acquire(blocking=False):
            conn.close()
            return

        def linger() -> None:
            try:
                _linger(conn)
            except OSError:
                pass
            finally:
                conn.close()
                self._refusing.release()

        threading.Thread(target=linger, daemon=True, name="keel-metrics-503").start()

    def accept(self, sock: socket.socket) -> None:
        try:
            conn, peer = sock.accept()
        except OSError:
            return  # the client went away before we took it
        client = str(peer[0])
        if not self.admits(client):
            self._count(0)  # 0: closed unread, not a client of ours
            conn.close()
            return
        if not self._admit(client):
            self._refuse(conn)
            return
        threading.Thread(target=self._serve, args=(conn, client), daemon=True,
                         name="keel-metrics-conn").start()

    def serve(self, stop: threading.Event, poll_s: float = 0.5) -> None:
        with selectors.DefaultSelector() as selector:
            for sock in self.socks:
                selector.register(sock, selectors.EVENT_READ)
            while not stop.is_set():
                for key, _ in selector.select(poll_s):
                    self.accept(key.fileobj)  # type: ignore[arg-type]

    def close(self) -> None:
        for sock in self.socks:
            sock.close()
