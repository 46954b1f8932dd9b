"""Ten seconds of the router as a Point: the lab's captured probes, CAKE and
CPU reads, and the stall meter's seconds, judged by the console's rules."""

from __future__ import annotations

import pytest

from keel.history.point import Point
from keel.history.sampler import (
    Interval,
    cake_of,
    latency_of,
    percentile,
    point_of,
    seconds_of,
    wan_rates,
)
from keel.metrics.snapshots import (
    CakeDirection,
    CakeSnapshot,
    LatencySnapshot,
    SeriesSnapshot,
)
from keel.parse.ping import LatencySample, track
from keel.stall.summary import CpuStall, StallSecond
from tests.fixtures.sources import lab
from tests.ui.uihelpers import fixture_collectors


def loaded_samples() -> list[LatencySample]:
    """The lab's ping through a loaded tunnel (5 Hz), as the probe hands it over."""
    return track(lab("ping-loaded.txt"), 0.2)


def interval_of(samples: list[LatencySample], **kw) -> Interval:
    t = int(samples[0].sent) // 10 * 10 + 10
    new = tuple(s for s in samples if t - 10 <= s.sent < t)
    snap = LatencySnapshot(t, (SeriesSnapshot("tunnel", "10.99.0.2", new, None, 4.0, 0.0),))
    return Interval(t=t, latency=snap, **kw)


def test_percentiles_by_nearest_rank():
    assert percentile([], 50) is None
    assert percentile([1.0], 95) == 1.0
    assert percentile([float(i) for i in range(1, 101)], 95) == 95.0
    assert percentile([float(i) for i in range(1, 21)], 50) == 10.0


def test_a_paths_latency_from_the_captured_probes():
    samples = loaded_samples()
    lat = latency_of(samples)
    rtts = sorted(s.rtt_ms for s in samples if s.rtt_ms is not None)
    assert lat.sent == len(samples)
    assert lat.max_ms == rtts[-1]
    assert lat.p50_ms is not None and lat.p95_ms is not None
    assert rtts[0] <= lat.p50_ms <= lat.p95_ms <= lat.max_ms
    assert lat.loss == pytest.approx((len(samples) - len(rtts)) / len(samples))
    assert latency_of([]).sent == 0 and latency_of([]).p50_ms is None


def test_lost_probes_count_as_loss():
    samples = [LatencySample(float(i), None if i % 4 == 0 else 5.0) for i in range(20)]
    assert latency_of(samples).loss == pytest.approx(0.25)


def direction(way: str, drops: int, marks: int, dev: str = "eth0") -> CakeDirection:
    return CakeDirection("egress" if way == "up" else "ingress", dev, 9_000_000, 4e6, 1500,
                         drops, marks, ())


def test_cakes_counters_become_the_intervals_and_a_new_shaper_restarts_them():
    before = CakeSnapshot((direction("up", 10, 2), direction("down", 5, 0, "ifb4eth0")))
    now = CakeSnapshot((direction("up", 17, 3), direction("down", 1, 0, "ifb4eth0")))
    got = cake_of(now, before)
    assert got["up"].drops == 7 and got["up"].marks == 1 and got["up"].rate_kbit == 9000
    assert got["down"].drops == 0  # counters went back: the shaper was made again
    assert cake_of(now, None)["up"].drops == 0
    assert cake_of(CakeSnapshot(error="tc: gone"), before) == {}


def test_wan_rates_from_two_reads():
    assert wan_rates({"rx_bytes": 0, "tx_bytes": 0}, {"rx_bytes": 1250, "tx_bytes": 125},
                     10) == (1000.0, 100.0)
    assert wan_rates(None, {"rx_bytes": 1, "tx_bytes": 1}, 10) is None
    assert wan_rates({"rx_bytes": 9, "tx_bytes": 9}, {"rx_bytes": 1, "tx_bytes": 1}, 10) is None


def test_each_second_of_the_interval_gets_its_own_probes_and_stall():
    samples = loaded_samples()
    iv = interval_of(samples)
    begin = iv.t - 10
    stall = StallSecond(begin + 3.5, (CpuStall(0, 50, 9.0, 12.0, 30.0),), 9.0, 12.0, 30.0,
                        0.0, True)
    seconds = seconds_of(Interval(t=iv.t, latency=iv.latency, stall=(stall,)))
    assert [s.t for s in seconds] == [begin + i + 1 for i in range(10)]
    assert seconds[3].stall_max_ms == 12.0 and seconds[2].stall_max_ms is None
    for i, s in enumerate(seconds):
        mine = [x.rtt_ms for x in samples if begin + i <= x.sent < begin + i + 1
                and x.rtt_ms is not None]
        if mine:
            assert s.latency_tunnel_worst_ms == max(mine)


def starving(t: float) -> StallSecond:
    return StallSecond(t, (CpuStall(0, 60, 120.0, 310.0, 4000.0),), 120.0, 310.0, 4000.0,
                       0.0, True)


def test_a_starved_interval_keeps_its_cause_its_seconds_and_its_evidence():
    """The stall meter's seconds at 310 ms: the console's rule names the
    router starved; the point keeps how many seconds, and the words."""
    collectors = fixture_collectors()
    for _ in range(2):
        for name in ("tunnel", "cpu", "cake", "tuning"):
            collectors[name].poll()
    iv = interval_of(loaded_samples(), cpu=collectors["cpu"].last,
                     tunnel=collectors["tunnel"].last, tuning=collectors["tuning"].last)
    begin = iv.t - 10
    judged = point_of(Interval(t=iv.t, latency=iv.latency, cpu=iv.cpu, tunnel=iv.tunnel,
                               tuning=iv.tuning,
                               stall=tuple(starving(begin + i + 0.5) for i in range(10))))
    point = judged.point
    assert next(iter(point.causes)) == "starved"
    assert point.causes["starved"] >= 5  # named once 3 seconds of stalls were seen
    assert "310 ms" in point.evidence
    assert point.stall_worst_ms == 310.0
    assert point.tunnel_cpu_cores == pytest.approx(collectors["cpu"].last.cost.cores, abs=5e-4)
    assert len(point.cores) == len(collectors["cpu"].last.cores)
    assert judged.verdicts[0].cause == "starved"
    assert Point.from_json(point.as_json()) == point  # what the store keeps reads back


def test_a_quiet_interval_is_healthy_with_no_evidence():
    judged = point_of(interval_of(track(lab("ping-idle.txt"), 0.2)))
    assert set(judged.point.causes) <= {"healthy"}
    assert judged.point.evidence == ""


def test_the_window_carries_over_from_the_interval_before():
    """Stalls in the last 2 seconds of one interval and the first of the next:
    the seconds before are handed over, so the rule sees 3 in its window."""
    iv = interval_of(loaded_samples())
    begin = iv.t - 10
    first = point_of(Interval(t=iv.t, latency=iv.latency,
                              stall=(starving(begin + 8.5), starving(begin + 9.5))))
    assert "starved" not in first.point.causes
    nxt = point_of(Interval(t=iv.t + 10, stall=(starving(iv.t + 0.5),)), first.signals)
    assert "starved" in nxt.point.causes
