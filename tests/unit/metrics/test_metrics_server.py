"""`keel metrics-serve` (keel.metrics.server, .http, .scrape, .cli): a
request's head judged; a real socket on 127.0.0.1 scraped and its body
parsed by prometheus_client; the limits (a slowloris cut, too many at once
refused, a long head refused); any bytes as a request never crash it and
get a valid status or nothing; the command's bad input refused."""

from __future__ import annotations

import contextlib
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from prometheus_client.parser import text_string_to_metric_families

from keel.history.point import Latency, Point
from keel.metrics import http, server
from keel.metrics.cli import run_metrics_server
from keel.metrics.scrape import PeerNames, Scraper
from keel.system.fake import FakeLiveSource

TOP = Path(__file__).resolve().parents[3]
GET = b"GET /metrics HTTP/1.1\r\nHost: router\r\nAccept: text/plain\r\n\r\n"
STATUSES = set(http.REASONS)


# --- the head, judged ----------------------------------------------------------------
@pytest.mark.parametrize(("head", "status"), [
    (GET, 200),
    (b"GET /metrics HTTP/1.0\r\n\r\n", 200),
    (b"HEAD /metrics HTTP/1.1\r\n\r\n", 200),
    (b"GET /metrics?name[]=up HTTP/1.1\n\n", 200),  # a query, bare LFs
    (b"GET / HTTP/1.1\r\n\r\n", 200),
    (b"GET /metrics/ HTTP/1.1\r\n\r\n", 404),
    (b"GET /../etc/passwd HTTP/1.1\r\n\r\n", 404),
    (b"GET http://router/metrics HTTP/1.1\r\n\r\n", 400),  # absolute form: not for us
    (b"POST /metrics HTTP/1.1\r\nContent-Length: 0\r\n\r\n", 405),
    (b"DELETE / HTTP/1.1\r\n\r\n", 405),
    (b"GET /metrics HTTP/2.0\r\n\r\n", 505),
    (b"GET /metrics HTTP/1.1 extra\r\n\r\n", 400),
    (b"GET  /metrics HTTP/1.1\r\n\r\n", 400),
    (b"GET /metrics\r\n\r\n", 400),  # HTTP/0.9
    (b"G\x00T /metrics HTTP/1.1\r\n\r\n", 400),
    (b"GET /m\xe9trics HTTP/1.1\r\n\r\n", 400),
    (b"GET /metrics HTTP/1.1\r\n folded: value\r\n\r\n", 400),
    (b"GET /metrics HTTP/1.1\r\nno colon\r\n\r\n", 400),
    (b"GET /metrics HTTP/1.1\r\nBad Name: x\r\n\r\n", 400),
    (b"GET /metrics HTTP/1.1\r\nX: a\rb\r\n\r\n", 400),
    (b"\r\n\r\n", 400),
    (b"GET /metrics HTTP/1.1\r\n" + b"X-A: b\r\n" * 33 + b"\r\n", 431),
    (b"GET /metrics HTTP/1.1\r\n" + b"X-A: b\r\n" * 32 + b"\r\n", 200),
    (b"GET /metrics HTTP/1.1\r\nX: " + b"a" * http.MAX_HEAD + b"\r\n\r\n", 431),
])
def test_a_head_is_judged(head, status):
    assert http.judge(head).status == status


def test_a_response_closes_and_says_no_more_than_its_reason():
    reply = http.response(405)
    head, body = reply.split(b"\r\n\r\n", 1)
    assert head.split(b"\r\n")[0] == b"HTTP/1.1 405 Method Not Allowed"
    assert b"Connection: close" in head and b"Allow: GET, HEAD" in head
    assert body == b"405 Method Not Allowed\n"
    only = http.response(200, b"x" * 10, head_only=True)
    assert b"\r\nContent-Length: 10\r\n" in only and only.endswith(b"nosniff\r\n\r\n")


# --- a real socket --------------------------------------------------------------------
NOW = 1_800_000_015.0
POINT = Point(t=1_800_000_010, latency={"tunnel": Latency(21.0, 40.0, 55.0, 0.0, 20)},
              stall_worst_ms=1.5, tunnel_cpu_cores=0.2, causes={"healthy": 10})


def write_latest(path: Path, at: float) -> None:
    """As keel history-daemon writes it (keel.history.daemon.write_latest)."""
    from keel.history import daemon

    daemon.write_latest(path, POINT, [{"cause": "healthy", "severity": "ok", "text": "fine"}],
                        at)


class Clock:
    def __init__(self, t: float) -> None:
        self.t = t

    def __call__(self) -> float:
        return self.t


@contextlib.contextmanager
def serving(tmp_path: Path, **limits):
    clock = Clock(NOW)
    latest = tmp_path / "latest.json"
    write_latest(latest, NOW - 3)
    scraper = Scraper(FakeLiveSource(clock, clock), latest=latest, names=lambda: {},
                      version="1.4.0", slot="A", clock=time.monotonic, wallclock=clock)
    sock = server.open_socket(server.Listener("127.0.0.1", 0))
    srv = server.Server([sock], scraper.body, say=lambda line: None, **limits)
    stop = threading.Event()
    thread = threading.Thread(target=srv.serve, args=(stop, 0.05), daemon=True)
    thread.start()
    try:
        yield srv, sock.getsockname()[1], scraper
    finally:
        stop.set()
        thread.join(5)
        srv.close()


def exchange(port: int, data: bytes, half_close: bool = True) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as c:
        c.sendall(data)
        if half_close:
            c.shutdown(socket.SHUT_WR)
        return read_all(c)


def settled(srv: server.Server) -> None:
    """Every connection the server took is closed and released (it reads
    what a client still sends for a moment after its response): the next
    request from this address is not refused as one too many."""
    end = time.monotonic() + 5
    while srv._open and time.monotonic() < end:
        time.sleep(0.01)


def read_all(c: socket.socket) -> bytes:
    out = b""
    while chunk := c.recv(65536):
        out += chunk
    return out


def status_of(reply: bytes) -> int:
    return int(reply.split(b" ", 2)[1])


def test_a_scrape_on_a_real_socket_parses(tmp_path):
    with serving(tmp_path) as (_srv, port, _scraper):
        reply = exchange(port, GET)
    head, body = reply.split(b"\r\n\r\n", 1)
    assert head.startswith(b"HTTP/1.1 200 OK\r\n")
    assert b"Content-Type: text/plain; version=0.0.4; charset=utf-8" in head
    assert f"Content-Length: {len(body)}".encode() in head
    families = {f.name: f for f in text_string_to_metric_families(body.decode())}
    samples = {s.name: s for f in families.values() for s in f.samples}
    assert samples["keel_info"].labels == {"version": "1.4.0", "slot": "A"}
    # the fake router's wg0 and its one peer, its two CAKEs, the daemon's point
    sent = samples["wireguard_sent_bytes_total"]
    assert sent.labels["interface"] == "wg0" and sent.value > 0
    assert {s.labels["direction"] for s in families["keel_cake_drops"].samples} == {"up", "down"}
    assert samples["keel_latency_p50_seconds"].value == 0.021
    assert samples["keel_verdict"].labels == {"cause": "healthy", "severity": "ok"}
    assert {s.labels["collector"]: s.value for s in
            families["keel_scrape_collector_success"].samples} == \
        {"wireguard": 1, "cake": 1, "history": 1}


def test_head_index_and_refusals_on_a_real_socket(tmp_path):
    with serving(tmp_path) as (srv, port, _scraper):
        head = exchange(port, b"HEAD /metrics HTTP/1.1\r\n\r\n")
        assert status_of(head) == 200 and head.endswith(b"\r\n\r\n")
        settled(srv)
        assert exchange(port, b"GET / HTTP/1.0\r\n\r\n").endswith(http.INDEX)
        for data, status in ((b"PUT /metrics HTTP/1.1\r\n\r\n", 405),
                             (b"GET /x HTTP/1.1\r\n\r\n", 404),
                             (b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\r\n\r\n", 400),
                             (b"GET /metrics HTTP/1.1\r\nX: " + b"a" * 20_000, 431),
                             (b"GET /metr", 400)):  # stopped in the middle of its head
            settled(srv)
            reply = exchange(port, data)
            assert status_of(reply) == status, data[:40]
            assert b"metr" not in reply.split(b"\r\n\r\n", 1)[1]  # nothing reflected
        settled(srv)
        assert exchange(port, b"") == b""  # nothing asked, nothing said
    assert srv.answered == {200: 2, 405: 1, 404: 1, 400: 2, 431: 1}


def test_a_slowloris_is_cut_off(tmp_path):
    """A head that trickles in, a byte at a time, gets 408 once its time is
    up, however lively the client keeps it."""
    with serving(tmp_path, head_timeout_s=0.6) as (_srv, port, _scraper), \
            socket.create_connection(("127.0.0.1", port), timeout=10) as c:
        start = time.monotonic()
        with contextlib.suppress(OSError):
            for byte in GET[:-2]:
                c.send(bytes([byte]))
                time.sleep(0.05)
                if time.monotonic() - start > 3:
                    break
        reply = read_all(c)
        assert time.monotonic() - start < 3
    assert status_of(reply) == 408


def test_too_many_at_once_are_refused_and_the_next_is_served(tmp_path):
    with serving(tmp_path, max_connections=3, max_per_client=2, head_timeout_s=1.0) as (
            srv, port, _scraper):
        idle = [socket.create_connection(("127.0.0.1", port), timeout=10) for _ in range(2)]
        time.sleep(0.2)
        # a third from the same address: 503 at once, unread
        assert status_of(exchange(port, GET, half_close=False)) == 503
        for c in idle:  # the idle ones are cut off in their turn
            assert status_of(read_all(c)) == 408
            c.close()
        settled(srv)
        assert status_of(exchange(port, GET)) == 200
    assert srv.answered == {503: 1, 408: 2, 200: 1}


def test_a_flood_of_scrapes_is_one_scrape_a_second(tmp_path):
    with serving(tmp_path) as (srv, port, scraper):
        bodies = set()
        for _ in range(10):
            settled(srv)
            bodies.add(exchange(port, GET).split(b"\r\n\r\n", 1)[1])
    assert len(bodies) == 1 and scraper.scrapes == 1


# --- any bytes as a request -------------------------------------------------------------
def answered(data: bytes) -> tuple[int | None, bytes]:
    """`answer` on one end of a socket pair, `data` sent from the other."""
    ours, theirs = socket.socketpair()
    with ours, theirs:
        theirs.sendall(data)
        theirs.shutdown(socket.SHUT_WR)
        status = server.answer(ours, lambda: b"keel_up 1\n", lambda line: None, 1.0)
        ours.close()
        return status, read_all(theirs)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=10_000) | st.builds(
    lambda m, t, v, h: m + b" " + t + b" " + v + b"\r\n" + h + b"\r\n\r\n",
    st.sampled_from([b"GET", b"HEAD", b"POST", b"get"]) | st.binary(max_size=8),
    st.sampled_from([b"/metrics", b"/", b"/x"]) | st.binary(max_size=30),
    st.sampled_from([b"HTTP/1.1", b"HTTP/1.0", b"HTTP/9"]) | st.binary(max_size=10),
    st.binary(max_size=200)))
def test_any_bytes_get_a_valid_status_or_nothing(data):
    status, reply = answered(data)
    if status is None:
        assert reply == b"" and not data
        return
    assert status in STATUSES and status not in (500, 503)
    head = reply.split(b"\r\n\r\n", 1)[0].split(b"\r\n")
    assert head[0] == f"HTTP/1.1 {status} {http.REASONS[status]}".encode()
    assert b"Connection: close" in head
    if status == 200:
        assert reply.endswith(b"keel_up 1\n") or reply.endswith(http.INDEX) \
            or reply.endswith(b"\r\n\r\n")  # HEAD


def test_a_failing_scrape_is_a_500_and_said_without_the_request():
    said: list[str] = []

    def broken() -> bytes:
        raise RuntimeError("boom\x1b[2J")

    ours, theirs = socket.socketpair()
    with ours, theirs:
        theirs.sendall(b"GET /metrics HTTP/1.1\r\nX-Evil: \x1b]0;owned\x07\r\n\r\n")
        assert server.answer(ours, broken, said.append, 1.0) == 500
        ours.close()
        assert status_of(read_all(theirs)) == 500
    assert said == ["keel metrics-serve: the scrape failed: RuntimeError: boom\\x1b[2J"]


# --- the command -----------------------------------------------------------------------
@pytest.mark.parametrize(("addresses", "said"), [
    (["router.lan"], "--listen router.lan: not an IPv4 or IPv6 address (no names, no zone)"),
    (["fe80::1%eth0"], "--listen fe80::1%eth0: not an IPv4 or IPv6 address"),
    (["192.168.77.1", "192.168.77.01"], "not an IPv4 or IPv6 address"),
    (["10.0.0.1", "10.0.0.1"], "--listen 10.0.0.1: given twice"),
    (["0.0.0.0", "10.0.0.1"], "--listen 10.0.0.1: 0.0.0.0 listens there already"),
    (["::", "fd00::1"], "--listen fd00::1: :: listens there already"),
    (["bad\x1b[31m"], "--listen bad\\x1b[31m: not an IPv4"),
])
def test_bad_addresses_are_refused_and_nothing_listens(addresses, said, capsys):
    assert run_metrics_server(addresses, 9586) == 2
    assert said in capsys.readouterr().err


def test_both_wildcards_and_the_other_familys_addresses_go_together():
    got = server.listeners(["0.0.0.0", "::"], 9586)
    assert [str(x) for x in got] == ["0.0.0.0:9586", "[::]:9586"]
    assert [str(x) for x in server.listeners(["10.77.0.1", "::"], 1)] == \
        ["10.77.0.1:1", "[::]:1"]
    with pytest.raises(server.ListenError, match=r"--port 0: not 1\.\.65535"):
        server.listeners(["127.0.0.1"], 0)


def test_an_address_not_on_any_interface_is_bound_anyway():
    """The LAN's NIC may come later: the socket waits for its address."""
    sock = server.open_socket(server.Listener("192.0.2.77", 0))
    sock.close()


def test_peer_names_follow_the_config_file(tmp_path):
    path = tmp_path / "keel.toml"
    peer = ("[wireguard]\nenabled = true\naddress = ['10.7.0.2/24']\n[[wireguard.peer]]\n"
            "public_key = 'HlOu1tgN6jIPCqo/B9y+b7TT1bltyagEMGZGjSZNPVI='\n"
            "allowed_ips = ['10.7.0.1/32']\nname = '{name}'\n")
    path.write_text(peer.format(name="hub"))
    names = PeerNames(lambda: path)
    assert names() == {"HlOu1tgN6jIPCqo/B9y+b7TT1bltyagEMGZGjSZNPVI=": "hub"}
    path.write_text(peer.format(name="hub2") + "\n")
    assert list(names().values()) == ["hub2"]
    path.write_text("[wireguard]\nenabled = 'x'\n")  # invalid: the last names stay
    assert list(names().values()) == ["hub2"]
    path.unlink()
    assert list(names().values()) == ["hub2"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_keel_metrics_serve_runs_until_sigterm(tmp_path):
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "keel.cli", "metrics-serve", "--listen",
                             "127.0.0.1", "--port", str(port), "--latest",
                             str(tmp_path / "none.json")],
                            cwd=TOP, env={"PYTHONPATH": str(TOP / "tui")},
                            stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stderr is not None
        assert proc.stderr.readline().strip() == \
            f"keel metrics-serve: listening on 127.0.0.1:{port} (GET /metrics)"
        body = exchange(port, GET).split(b"\r\n\r\n", 1)[1].decode()
        names = {f.name for f in text_string_to_metric_families(body)}
        assert {"keel_info", "wireguard_sent_bytes", "keel_verdict"} <= names
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(10) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
