"""The adaptive daemon on real sockets: a reflector on loopback (standing in
for the tunnel's peer) answers its probes; CAKE is a recorder (the host has
no sch_cake; the adaptive lab changes the real one)."""

from __future__ import annotations

import json
import threading
import time
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from keel.adaptive import daemon as d
from keel.adaptive import reflector, wire
from keel.adaptive.controller import Bounds

PORT = 45822


class Recorder:
    def __init__(self) -> None:
        self.calls: list[tuple[str, int]] = []

    def set(self, dev: str, kbit: int) -> None:
        self.calls.append((dev, kbit))


def plan() -> d.Plan:
    return d.Plan("127.0.0.1", "lo", "lo", Bounds(500, 1500, 2000), Bounds(1000, 3000, 4000),
                  "lo", "127.0.0.1")


def run_for(daemon: d.Daemon, seconds: float) -> None:
    stop = threading.Event()
    thread = threading.Thread(target=daemon.run, args=(stop,), daemon=True)
    thread.start()
    time.sleep(seconds)
    stop.set()
    thread.join(3)


def test_arguments_are_checked() -> None:
    got = d.parse_args(["--peer", "10.99.0.1", "--egress", "eth0", "--ingress", "ifb4eth0",
                        "--tunnel", "wg0", "--source", "10.99.0.2",
                        "--up", "600:1350:1500", "--down", "1500:3600:4000"])
    assert got.up == Bounds(600, 1350, 1500) and got.ingress == "ifb4eth0"
    assert (got.tunnel, got.source) == ("wg0", "10.99.0.2")
    tunnel = ["--tunnel", "wg0", "--source", "10.99.0.2"]
    for bad in (["--peer", "10.99.0.1", "--egress", "e", "--ingress", "i", *tunnel,
                 "--up", "3:2:1", "--down", "1:1:1"],
                # the probes are IPv4, and go through the tunnel only
                ["--peer", "fd00::1", "--egress", "e", "--ingress", "i", *tunnel,
                 "--up", "1:1:1"],
                ["--peer", "10.99.0.1", "--egress", "e", "--ingress", "i", "--up", "1:1:1"]):
        with pytest.raises(SystemExit):
            d.parse_args(bad)


def test_it_measures_through_the_peers_reflector(tmp_path: Path, monkeypatch) -> None:
    import socket

    monkeypatch.setattr(reflector, "RESCAN_S", 0.3)
    refl = reflector.Reflector(lambda: 0.0, port=PORT,
                               find=lambda: {"lo": socket.if_nametoindex("lo")})
    stop = threading.Event()
    threading.Thread(target=refl.run, args=(stop,), daemon=True).start()
    cake = Recorder()
    daemon = d.Daemon(plan(), run_dir=tmp_path, cake=cake, port=PORT)
    try:
        run_for(daemon, 2.5)
    finally:
        stop.set()
    assert cake.calls[:2] == [("lo", 1500), ("lo", 3000)]  # the base, at the start
    # the line rests (lo carries next to nothing): a probe a second
    assert 2 <= daemon.answers <= 4 and refl.answered >= daemon.answers
    snap = json.loads((tmp_path / "adapt.json").read_text())
    assert snap["up"]["rate_kbit"] == 1500 and snap["down"]["rate_kbit"] == 3000
    assert snap["up"]["baseline_ms"] is not None and abs(snap["up"]["baseline_ms"]) < 50
    assert snap["peer_silent_s"] is not None and snap["peer_silent_s"] < 1.5
    log = [json.loads(line) for line in (tmp_path / "adapt.jsonl").read_text().splitlines()]
    assert [r["kind"] for r in log] == ["base", "base"]


def test_it_probes_fast_while_either_direction_works(tmp_path: Path) -> None:
    from keel.thresholds import ADAPT_PROBE_HZ, ADAPT_RESTING_HZ

    daemon = d.Daemon(plan(), run_dir=tmp_path, cake=Recorder(), port=PORT + 2)
    assert daemon.period() == 1 / ADAPT_RESTING_HZ  # both at the base, no load
    daemon.through["down"] = 0.5 * 3000  # a download
    assert daemon.period() == 1 / ADAPT_PROBE_HZ
    daemon.through["down"] = 0.0
    daemon.states["up"] = replace(daemon.states["up"], rate_kbit=900)  # not back at the base
    assert daemon.period() == 1 / ADAPT_PROBE_HZ


def test_a_peer_that_never_answers_leaves_the_base(tmp_path: Path) -> None:
    cake = Recorder()
    daemon = d.Daemon(plan(), run_dir=tmp_path, cake=cake, port=PORT + 1)
    run_for(daemon, 1.0)
    assert daemon.answers == 0
    assert set(cake.calls) == {("lo", 1500), ("lo", 3000)}
    assert json.loads((tmp_path / "adapt.json").read_text())["peer_silent_s"] is None


def test_the_log_stays_bounded(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(d, "LOG_MAX_LINES", 10)
    monkeypatch.setattr(d, "LOG_KEEP_LINES", 4)
    log = d.Log(tmp_path / "adapt.jsonl")
    for i in range(25):
        log.add({"i": i})
    lines = (tmp_path / "adapt.jsonl").read_text().splitlines()
    assert len(lines) <= 10 and json.loads(lines[-1]) == {"i": 24}


# --- answers only to probes it sent ------------------------------------------------
def answer_to(seq: int, sent_ns: int) -> wire.Answer:
    return wire.Answer(seq, sent_ns, sent_ns + 5_000_000, sent_ns + 5_100_000, 0)


def test_an_answer_counts_once_and_only_for_a_probe_sent() -> None:
    out = d.Outstanding(size=4)
    seqs = [out.new(1_000 + n) for n in range(4)]
    assert len(set(seqs)) == 4
    assert not out.answered(answer_to(seqs[0], 999))  # the right number, not its time
    assert out.answered(answer_to(seqs[0], 1_000))
    assert not out.answered(answer_to(seqs[0], 1_000))  # a replay
    newest = out.new(2_000)  # the oldest still waiting (seqs[1]) is forgotten at 5
    out.new(2_001)
    assert not out.answered(answer_to(seqs[1], 1_001))
    assert out.answered(answer_to(newest, 2_000))
    assert len(out.sent) <= 4


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(0, 2**63 - 1), st.integers(1, 64))
def test_a_guessed_answer_is_refused(seq: int, sent_ns: int, probes: int) -> None:
    """Whatever number and time an answer forged off the tunnel carries, it
    counts only if it is exactly one of the probes' (random numbers)."""
    out = d.Outstanding()
    sent = {out.new(10**18 + n): 10**18 + n for n in range(probes)}
    assert out.answered(answer_to(seq, sent_ns)) == (sent.get(seq) == sent_ns)


def test_the_sequence_numbers_are_random() -> None:
    """A nonce each: not a count from 0 or 1 (what a forger would guess)."""
    out = d.Outstanding()
    seqs = [out.new(n) for n in range(64)]
    assert seqs != sorted(seqs) and len(set(seqs)) == 64
    assert any(s > 2**24 for s in seqs)


def test_the_daemons_socket_is_bound_to_the_tunnel(tmp_path: Path) -> None:
    import socket

    daemon = d.Daemon(plan(), run_dir=tmp_path, cake=Recorder(), port=PORT + 3)
    try:
        bound = daemon.sock.getsockopt(socket.SOL_SOCKET, socket.SO_BINDTODEVICE, 16)
        assert bound.rstrip(b"\0") == b"lo"
        assert daemon.sock.getsockname()[0] == "127.0.0.1"
        assert daemon.sock.getpeername() == ("127.0.0.1", PORT + 3)
    finally:
        daemon.sock.close()


def test_a_stall_says_which_cpu_was_away() -> None:
    """The log says why a cut was skipped: the figures a user reads to tell a
    slow router from a slow peer."""
    assert d.stall_words(5.0, 0, False) == ""
    assert d.stall_words(35.4, 0, False) == "this router woke 35 ms late"
    assert d.stall_words(0.0, 0, True) == "a core of this router saturated"
    assert d.stall_words(0.0, 40, False) == "the peer's CPU away 40 ms"
    assert d.stall_words(25.0, 30, True) == ("this router woke 25 ms late, a core of this "
                                             "router saturated, the peer's CPU away 30 ms")
