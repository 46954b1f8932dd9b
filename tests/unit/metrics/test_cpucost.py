"""The CPU-cost arithmetic: CPU-seconds per gigabit from tick and byte deltas."""

from __future__ import annotations

import pytest

from keel.metrics.collectors import CpuCollector
from keel.metrics.cpucost import cpu_warnings, tunnel_cost
from keel.parse.procstat import CpuShare, parse_proc_stat
from tests.fixtures.sources import CRYPT_SHIFT, WG_RX, WG_TX, fixture_source, lab

BEFORE = parse_proc_stat(lab("proc-stat-before.txt"))
AFTER = parse_proc_stat(lab("proc-stat-after.txt"))


def test_tunnel_cost_from_lab_ticks():
    # softirq ticks: cpu0 108-20, cpu1 183-12; wall: (473 + 503) ticks / 2 CPUs
    cost = tunnel_cost(BEFORE, AFTER, crypt_ticks=80, tunnel_bytes=40_000_000, hz=100)
    assert cost.softirq_seconds == pytest.approx(2.59)
    assert cost.crypt_seconds == pytest.approx(0.80)
    assert cost.wall_seconds == pytest.approx(4.88)
    assert cost.ncpus == 2
    assert cost.cores == pytest.approx(3.39 / 4.88)
    assert cost.percent == pytest.approx(100 * 3.39 / 4.88 / 2)
    assert cost.gigabits == pytest.approx(0.32)
    assert cost.seconds_per_gigabit == pytest.approx(3.39 / 0.32)
    assert cost.throughput_bps == pytest.approx(0.32e9 / 4.88)


def test_tunnel_cost_without_traffic_has_no_ratio():
    cost = tunnel_cost(BEFORE, AFTER, crypt_ticks=0, tunnel_bytes=0, hz=100)
    assert cost.seconds_per_gigabit is None
    assert tunnel_cost(BEFORE, BEFORE, 0, 0, 100) is None


def test_cpu_collector_adds_wg_crypt_workers_and_wg_bytes():
    collector = CpuCollector(fixture_source(), hz=100)
    assert collector.poll().cost is None  # one read: nothing to compare yet
    snap = collector.poll()
    busy_workers = 5  # of the 8 wg-crypt kworkers in the fixture, 5 ran 20+ ticks
    assert snap.cost.crypt_seconds == pytest.approx(busy_workers * CRYPT_SHIFT / 100)
    assert snap.cost.tunnel_bytes == WG_RX + WG_TX
    assert [c.cpu for c in snap.cores] == ["cpu0", "cpu1"]
    assert snap.cores[1].softirq == pytest.approx(171 / 503)


def share(cpu, softirq=0.0, idle=1.0, steal=0.0):
    return CpuShare(cpu, 0.0, 0.0, softirq, 0.0, steal, idle, 100)


def test_warning_when_one_core_saturated_while_others_idle():
    hot = {"cpu": share("cpu", 0.48, 0.5), "cpu0": share("cpu0", 0.95, 0.03),
           "cpu1": share("cpu1", 0.0, 0.97)}
    assert cpu_warnings([hot, hot]) == ()  # not held long enough
    (warning,) = cpu_warnings([hot, hot, hot])
    assert warning.startswith("cpu0 softirq 95% while the other cores idle")
    busy = {**hot, "cpu1": share("cpu1", 0.5, 0.2)}
    assert cpu_warnings([hot, hot, busy]) == ()


def test_warning_when_steal_stays_high():
    stolen = {"cpu": share("cpu", 0.0, 0.6, steal=0.15), "cpu0": share("cpu0"),
              "cpu1": share("cpu1")}
    calm = {**stolen, "cpu": share("cpu", 0.0, 0.9, steal=0.02)}
    assert cpu_warnings([stolen] * 3) == (
        "steal 15%: the hypervisor takes this VM's CPU (shared/burstable instance?)",)
    assert cpu_warnings([stolen, calm, stolen]) == ()
