"""keel.stall.summary: one second of the stall meter, from lateness lists and
two /proc/stat texts (pure)."""

from __future__ import annotations

import json

import pytest

from keel.stall.summary import CpuStall, StallSecond, p99, steal_reported, summarise

STAT_BEFORE = """\
cpu  1000 0 200 8000 10 0 50 0 0 0
cpu0 500 0 100 4000 5 0 25 0 0 0
cpu1 500 0 100 4000 5 0 25 0 0 0
intr 12345
"""
# 200 ticks later (2 CPUs x 1 s x USER_HZ 100): 50 of them stolen
STAT_AFTER = """\
cpu  1040 0 220 8090 10 0 50 50 0 0
cpu0 520 0 110 4045 5 0 25 25 0 0
cpu1 520 0 110 4045 5 0 25 25 0 0
intr 12400
"""
STAT_NO_STEAL = """\
cpu  1000 0 200 8000 10 0 50 0 0 0
cpu0 1000 0 200 8000 10 0 50 0 0 0
"""


def test_p99_is_the_nearest_rank():
    assert p99([]) == 0.0
    assert p99([0.5]) == 0.5
    assert p99([float(v) for v in range(100)]) == 98.0  # of 100: the 2nd largest
    assert p99([float(v) for v in reversed(range(200))]) == 197.0


def test_a_second_per_cpu_and_over_all_cpus():
    late = {1: [0.0001] * 98 + [0.030, 0.200], 0: [0.0002] * 100}
    s = summarise(late, STAT_BEFORE, STAT_AFTER, 1.0, t=1700000000.0, realtime=True)
    assert [c.cpu for c in s.per_cpu] == [0, 1]
    cpu0, cpu1 = s.per_cpu
    assert cpu0 == CpuStall(cpu=0, samples=100, p99_ms=0.2, max_ms=0.2, stalled_ms=20.0)
    assert cpu1.samples == 100
    assert cpu1.p99_ms == pytest.approx(30.0)
    assert cpu1.max_ms == pytest.approx(200.0)
    assert cpu1.stalled_ms == pytest.approx(98 * 0.1 + 230.0)
    # over all CPUs: 200 samples, the 198th of them sorted is the p99: the two
    # late ones are exactly the top 1 %
    assert s.samples == 200
    assert s.p99_ms == pytest.approx(0.2)
    assert s.max_ms == pytest.approx(200.0)
    assert s.stalled_ms == pytest.approx(cpu0.stalled_ms + cpu1.stalled_ms)
    assert s.steal == pytest.approx(0.25)
    assert s.t == 1700000000.0 and s.realtime and s.interval_s == 1.0


def test_a_cpu_with_no_samples_this_second():
    """A vCPU descheduled for the whole second gives no samples: zeros, not a crash
    (its stall shows up in the next second's lateness)."""
    s = summarise({0: [], 1: [0.001]}, None, None, 1.0, t=1.0, realtime=False)
    assert s.per_cpu[0] == CpuStall(0, 0, 0.0, 0.0, 0.0)
    assert s.max_ms == pytest.approx(1.0)
    assert s.steal is None and not s.realtime


@pytest.mark.parametrize(("before", "after", "interval"), [
    (None, STAT_AFTER, 1.0),
    (STAT_BEFORE, "", 1.0),
    (STAT_BEFORE, "cpu  garbage here\n", 1.0),
    (STAT_BEFORE, "intr 1\n", 1.0),
    (STAT_BEFORE, STAT_BEFORE, 1.0),  # no ticks between the reads
    (STAT_BEFORE, STAT_AFTER, 0.0),
])
def test_steal_is_none_when_unreadable(before, after, interval):
    assert summarise({0: [0.0]}, before, after, interval, t=1.0, realtime=True).steal is None


def test_steal_reported_only_when_the_column_moved_since_boot():
    assert steal_reported(STAT_AFTER)
    assert not steal_reported(STAT_BEFORE)  # steal exactly 0 since boot
    assert not steal_reported(STAT_NO_STEAL)
    assert not steal_reported("cpu  1 2 3 4\n")  # a kernel without the column
    assert not steal_reported(None)
    assert not steal_reported("cpu  x y\n")


def test_as_dict_and_from_dict_round_trip_through_json():
    s = summarise({0: [0.001, 0.002], 3: [0.05]}, STAT_BEFORE, STAT_AFTER, 1.002,
                  t=1700000001.5, realtime=True)
    again = StallSecond.from_dict(json.loads(json.dumps(s.as_dict())))
    assert again == s
    none_steal = StallSecond(t=1.0, per_cpu=(), p99_ms=0.0, max_ms=0.0, stalled_ms=0.0,
                             steal=None, realtime=False)
    assert StallSecond.from_dict(json.loads(json.dumps(none_steal.as_dict()))) == none_steal


@pytest.mark.parametrize("bad", [{}, {"t": 1.0}, {"t": "x", "per_cpu": [], "p99_ms": 0,
                                                   "max_ms": 0, "stalled_ms": 0,
                                                   "realtime": True},
                                 {"t": 1.0, "per_cpu": [{"cpu": 0}], "p99_ms": 0, "max_ms": 0,
                                  "stalled_ms": 0, "realtime": True}])
def test_from_dict_rejects_malformed_records(bad):
    with pytest.raises((KeyError, TypeError, ValueError)):
        StallSecond.from_dict(bad)


def test_the_stall_second_is_frozen():
    s = summarise({0: [0.0]}, None, None, 1.0, t=1.0, realtime=True)
    with pytest.raises(AttributeError):
        s.max_ms = 5.0  # type: ignore[misc]
