"""The latency collector keeps its history's RTTs sorted as samples come and
go: its idle baseline is the one a sort of the whole history gives."""

from __future__ import annotations

import random

from keel.metrics.latency import LatencyCollector, idle_baseline
from keel.parse.ping import LatencySample


class ScriptedProbe:
    """Random RTTs (some lost), a random number of samples a drain."""

    def __init__(self, name: str, seed: int) -> None:
        self.name, self.target = name, "192.0.2.9"
        self.rng = random.Random(seed)
        self.t = 0.0

    def start(self) -> None:
        pass

    def stop(self) -> None:
        pass

    def drain(self, now: float) -> list[LatencySample]:
        out = []
        for _ in range(self.rng.randrange(0, 12)):
            self.t += 0.2
            rtt = None if self.rng.random() < 0.05 else round(self.rng.uniform(2, 80), 1)
            out.append(LatencySample(self.t, rtt))
        return out


def test_the_baseline_and_loss_match_the_whole_history_as_it_rolls_over():
    probes = [ScriptedProbe("tunnel", 1), ScriptedProbe("outside", 2)]
    collector = LatencyCollector(probes, wallclock=lambda: 0.0, history=200, recent=50)
    seen: dict[str, list[LatencySample]] = {"tunnel": [], "outside": []}
    for _ in range(300):  # the history (200) rolls over many times
        snap = collector.poll()
        for series in snap.series:
            seen[series.name].extend(series.new)
            kept = seen[series.name][-200:]
            assert series.idle_ms == idle_baseline([s.rtt_ms for s in kept
                                                    if s.rtt_ms is not None])
            tail = kept[-50:]
            want = sum(s.rtt_ms is None for s in tail) / len(tail) if tail else 0.0
            assert series.loss == want
