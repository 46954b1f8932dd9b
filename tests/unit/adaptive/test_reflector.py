"""The reflector on real sockets: loopback stands in for a WireGuard
interface (the finder the test gives names it so), bound to it the way the
tunnel's socket is."""

from __future__ import annotations

import socket
import threading
import time
from pathlib import Path

import pytest

from keel.adaptive import reflector, wire

PORT = 45821


def lo_index() -> int:
    return socket.if_nametoindex("lo")


def test_only_wireguard_interfaces_are_found() -> None:
    from keel.system.links import wireguard_interfaces

    assert "lo" not in wireguard_interfaces()  # this host has none, and lo is not one


@pytest.fixture
def running(tmp_path: Path, monkeypatch):
    monkeypatch.setattr(reflector, "RESCAN_S", 0.3)  # the thread ends soon after stop
    if not hasattr(socket, "SO_BINDTODEVICE"):
        pytest.fail("SO_BINDTODEVICE is Linux's; keel runs on Linux")
    refl = reflector.Reflector(lambda: 12.5, port=PORT, find=lambda: {"lo": lo_index()},
                               per_peer_per_s=5)
    stop = threading.Event()
    thread = threading.Thread(target=refl.run, args=(stop,), daemon=True)
    thread.start()
    client = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    client.settimeout(2)
    yield refl, client
    stop.set()
    client.close()
    thread.join(3)
    assert not thread.is_alive()
    refl.close()


def ask(client: socket.socket, seq: int) -> wire.Answer:
    sent = time.time_ns()
    client.sendto(wire.probe(seq, sent), ("127.0.0.1", PORT))
    data = client.recv(100)
    return wire.parse_answer(data)


def test_a_probe_is_answered_with_times_and_the_stall(running) -> None:
    refl, client = running
    for _ in range(50):  # the first scan binds the socket
        if refl.sockets:
            break
        time.sleep(0.05)
    got = ask(client, 42)
    assert got.seq == 42 and got.peer_stall_ms == 12
    assert got.sent_ns <= got.received_ns <= got.answered_ns <= time.time_ns()
    up, down = got.one_way_ms(time.time_ns())
    assert 0 <= up < 1000 and 0 <= down < 1000


def test_garbage_is_not_answered_and_a_flood_is_cut(running) -> None:
    refl, client = running
    for _ in range(50):
        if refl.sockets:
            break
        time.sleep(0.05)
    client.sendto(b"hello", ("127.0.0.1", PORT))
    client.sendto(wire.probe(1, time.time_ns()) + b"x", ("127.0.0.1", PORT))
    answers = 0
    second = int(time.monotonic())
    for seq in range(20):
        client.sendto(wire.probe(seq, time.time_ns()), ("127.0.0.1", PORT))
    client.settimeout(0.5)
    try:
        while True:
            wire.parse_answer(client.recv(100))
            answers += 1
    except TimeoutError:
        pass
    # at most 5 a second: 20 sent within one second (or two, at a boundary)
    assert answers <= 10 if int(time.monotonic()) != second else answers == 5
    assert refl.refused >= 2 + 20 - answers


def test_a_flooding_peer_leaves_the_others_their_answers(running) -> None:
    """One peer floods (127.0.0.1), another probes (127.0.0.2): each has
    its own budget, the other is answered every time."""
    refl, flooder = running
    for _ in range(50):
        if refl.sockets:
            break
        time.sleep(0.05)
    other = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    other.bind(("127.0.0.2", 0))
    other.settimeout(1)
    try:
        answered = 0
        for seq in range(4):  # within this peer's 5 a second, whatever second it is
            for n in range(30):
                flooder.sendto(wire.probe(n, time.time_ns()), ("127.0.0.1", PORT))
            other.sendto(wire.probe(seq, time.time_ns()), ("127.0.0.1", PORT))
            answered += wire.parse_answer(other.recv(100)).seq == seq
        assert answered == 4
        assert refl.refused >= 4 * 30 - 2 * 5
    finally:
        other.close()


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_each_source_has_its_own_budget_a_second() -> None:
    clock = Clock()
    b = reflector.Budgets(per_peer=3, max_peers=10, clock=clock)
    assert [b.allow("10.0.0.2") for _ in range(5)] == [True] * 3 + [False] * 2
    assert [b.allow("10.0.0.3") for _ in range(3)] == [True] * 3
    clock.now = 100.99
    assert not b.allow("10.0.0.2")
    clock.now = 101.0  # a new second: a new budget
    assert b.allow("10.0.0.2")


def test_the_table_of_sources_is_bounded() -> None:
    """A flood from ever new addresses fills the table for the second and
    is refused; the sources already in it keep their budget; the table is
    never larger than its bound."""
    clock = Clock()
    b = reflector.Budgets(per_peer=3, max_peers=100, clock=clock)
    assert b.allow("10.0.0.2")
    fresh = sum(b.allow(f"10.1.{n // 256}.{n % 256}") for n in range(10_000))
    assert fresh == 99 and len(b.counts) == 100
    assert b.allow("10.0.0.2")
    clock.now += 1
    assert b.allow("10.9.9.9") and len(b.counts) == 1


def test_the_meter_reports_a_thread_that_overslept() -> None:
    from keel.stall.meter import StallMeter

    meter = StallMeter([0], period=0.04, realtime=False)
    meter._woke[0] = time.monotonic() - 0.5  # as if the CPU had been gone for half a second
    assert 400 < meter.recent_ms() < 600
    meter._woke[0] = time.monotonic()
    meter._late[0] = [0.0, 0.002, 0.0]
    meter._before[0] = [0.030]
    assert meter.recent_ms() == pytest.approx(30.0)
