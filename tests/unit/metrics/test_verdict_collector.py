"""The verdict collector: the other collectors' snapshots of the lab's captures
and the stall meter's second, as Signals, judged."""

from __future__ import annotations

import pytest

from keel.metrics.verdict import VerdictCollector, signals_from
from keel.stall.summary import CpuStall, StallSecond
from tests.ui.uihelpers import NOW, fixture_collectors


def starving(t: float) -> StallSecond:
    cpus = (CpuStall(0, 60, 120.0, 310.0, 4000.0),)
    return StallSecond(t, cpus, 120.0, 310.0, 4000.0, 0.0, True)


def polled(stall) -> VerdictCollector:
    collectors = fixture_collectors()
    verdict = VerdictCollector(collectors, collectors["cpu"].source, stall=stall,
                               wallclock=iter(range(int(NOW), int(NOW) + 100)).__next__)
    for _ in range(2):
        for name in ("tunnel", "cpu", "cake", "tuning", "latency"):
            collectors[name].poll()
    return verdict


def test_signals_from_the_lab_snapshots():
    verdict = polled(lambda: None)
    snap = verdict.poll()
    s = snap.signals
    assert s.stall_max_ms is None and snap.stall is None  # no meter: said, not guessed
    assert s.busy["cpu0"] == pytest.approx(1 - 0.41, abs=0.01)
    assert s.tunnel_cpu == pytest.approx(0.74, abs=0.01)
    assert s.tunnel_mbit == pytest.approx(320, rel=0.01)  # 240 + 80 Mbit/s through wg0
    assert s.cake_on and s.cake_drops == 12
    assert s.load_average == pytest.approx(0.21)
    assert s.latency_tunnel_ms is not None and s.latency_tunnel_idle_ms is not None
    assert snap.worst is not None


def test_stalls_with_tunnel_latency_are_named_starvation():
    verdict = polled(lambda: starving(NOW))
    snaps = [verdict.poll() for _ in range(5)]
    history = snaps[-1].history
    assert len(history) == 5
    # the stall meter at real-time priority is the proof, whatever the
    # router's own probes show
    top = snaps[-1].verdicts[0]
    assert top.cause == "starved" and "stalls up to 310 ms" in top.text
    assert top.evidence["stall_max_ms"] == 310.0


def test_signals_from_nothing_is_all_unknown():
    s = signals_from(NOW)
    assert s.stall_max_ms is None and s.steal is None and s.busy == {}
    assert not s.cake_on and s.tunnel_mbit is None
