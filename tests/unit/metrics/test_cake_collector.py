"""The CAKE collector: adaptive CAKE's bounds from the daemon's adapt.json,
and each direction's rate and throughput kept for the panel's sparklines."""

from __future__ import annotations

import json

from keel.metrics.collectors import CakeCollector
from keel.metrics.snapshots import CakeAdaptive
from keel.system import adaptive
from keel.system.fake import FakeLiveSource
from keel.system.source import FixtureSource
from tests.fixtures.sources import fixture_source


class Steps:
    def __init__(self, t: float = 1_800_000_000.0, step: float = 1.0) -> None:
        self.t, self.step = t, step

    def __call__(self) -> float:
        self.t += self.step
        return self.t


def test_a_fixed_cake_is_not_adaptive():
    clock = Steps()
    collector = CakeCollector(FakeLiveSource(clock, clock), clock, clock)
    collector.poll()
    snap = collector.poll()
    assert not snap.adaptive and snap.peer_silent_s is None
    assert [d.adaptive for d in snap.directions] == [None, None]
    assert [d.way for d in snap.directions] == ["up", "down"]


def test_adaptive_bounds_per_direction_by_device():
    clock = Steps()
    collector = CakeCollector(FakeLiveSource(clock, clock, adaptive=True), clock, clock)
    snap = collector.poll()
    assert snap.adaptive and snap.peer_silent_s == 0.1
    egress, ingress = snap.directions
    assert (egress.dev, ingress.dev) == ("eth0", "ifb4eth0")
    assert egress.adaptive == ingress.adaptive == CakeAdaptive(20_000_000, 40_000_000,
                                                               44_000_000)


def test_rates_and_throughput_kept_side_by_side_oldest_first_and_bounded():
    clock = Steps()
    source = FakeLiveSource(clock, clock, adaptive=True)
    collector = CakeCollector(source, clock, clock)
    first = collector.poll()
    assert all(d.rate_history == d.throughput_history == () for d in first.directions)
    snaps = [collector.poll() for _ in range(CakeCollector.HISTORY + 5)]
    last, before = snaps[-1], snaps[-2]
    for d, old in zip(last.directions, before.directions, strict=True):
        assert len(d.rate_history) == len(d.throughput_history) == CakeCollector.HISTORY
        assert d.rate_history[-1] == d.rate_bps and d.throughput_history[-1] == d.throughput_bps
        assert d.rate_history[:-1] == old.rate_history[1:]  # one in, the oldest out
        assert isinstance(d.rate_history, tuple)  # immutable: the UI renders, never edits
        # the fake line's capacity falls to the minimum and comes back: CAKE followed
        assert min(d.rate_history) < 0.55 * d.adaptive.base_bps
        assert max(d.rate_history) == d.adaptive.base_bps


def test_a_stale_or_broken_state_file_is_not_adaptive():
    state = {"t": 1_000.0, "peer": "10.99.0.1", "answers": 5, "peer_silent_s": None,
             "up": {"rate_kbit": 900, "min_kbit": 600, "base_kbit": 1350, "max_kbit": 1500,
                    "through_kbit": 800, "baseline_ms": 3.0, "dev": "eth0"}}
    for text, now, adapted in ((json.dumps(state), 1_001.0, True),
                               (json.dumps(state), 1_100.0, False),  # the daemon died
                               ("{not json", 1_001.0, False)):
        source = FixtureSource({adaptive.STATE_PATH: text}, fixture_source().commands)
        snap = CakeCollector(source, Steps(), lambda now=now: now).poll()
        assert snap.error is None and snap.adaptive is adapted
        if adapted:  # only the direction the daemon names by its device
            assert [d.adaptive is not None for d in snap.directions] == \
                [d.dev == "eth0" for d in snap.directions]


def test_a_removed_cake_takes_its_history_with_it():
    clock = Steps()
    source = FakeLiveSource(clock, clock)
    collector = CakeCollector(source, clock, clock)
    for _ in range(3):
        collector.poll()
    assert set(collector._rates) == {"eth0", "ifb4eth0"}
    real = source.run

    def only_egress(argv):
        out = real(argv)
        return json.dumps(json.loads(out)[:1]) if argv[0] == "tc" else out

    source.run = only_egress
    snap = collector.poll()
    assert [d.dev for d in snap.directions] == ["eth0"]
    assert set(collector._rates) == set(collector._through) == {"eth0"}
