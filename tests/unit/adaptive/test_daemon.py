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

from keel.adaptive import daemon as d
from keel.adaptive import reflector
from keel.adaptive.controller import Bounds

PORT = 45822


class Recorder:
    def __init__(self) -> None:
        self.calls: list[tuple[str, int]] = []

    def set(self, dev: str, kbit: int) -> None:
        self.calls.append((dev, kbit))


def plan() -> d.Plan:
    return d.Plan("127.0.0.1", "lo", "lo", Bounds(500, 1500, 2000), Bounds(1000, 3000, 4000))


def run_for(daemon: d.Daemon, seconds: float) -> None:
    stop = threading.Event()
    thread = threading.Thread(target=daemon.run, args=(stop,), daemon=True)
    thread.start()
    time.sleep(seconds)
    stop.set()
    thread.join(3)


def test_arguments_are_checked() -> None:
    got = d.parse_args(["--peer", "10.99.0.1", "--egress", "eth0", "--ingress", "ifb4eth0",
                        "--up", "600:1350:1500", "--down", "1500:3600:4000"])
    assert got.up == Bounds(600, 1350, 1500) and got.ingress == "ifb4eth0"
    with pytest.raises(SystemExit):
        d.parse_args(["--peer", "x", "--egress", "e", "--ingress", "i", "--up", "3:2:1",
                      "--down", "1:1:1"])


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
