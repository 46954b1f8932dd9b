"""The dashboard's panel lines: what the console can draw."""

from __future__ import annotations

from keel.metrics.verdict import VerdictSnapshot
from keel.ui import panels
from keel.verdicts import Verdict


def test_a_long_verdict_is_cut_with_an_ascii_ellipsis():
    long = Verdict("bloat", "bad", "the queue: latency +240 ms over idle under load " * 3)
    (line,) = panels.verdict_lines(VerdictSnapshot(verdicts=(long,)), width=80)
    assert line.cell_len == 80 and line.plain.endswith("...")
    assert line.plain.isascii()  # Rich's ellipsis is not in the console's font
    (short,) = panels.verdict_lines(VerdictSnapshot(verdicts=(Verdict("bloat", "bad", "x"),)))
    assert short.plain == "x"


def test_every_panel_has_a_title():
    assert set(panels.TITLES) == {"verdict", "tunnel", "cpu", "latency", "cake", "tuning"}
    assert all(title.isascii() and len(title) <= 32 for title in panels.TITLES.values())


def test_polls_of_one_interval_are_aligned_to_its_multiples():
    from keel.ui.polling import aligned_delay

    assert aligned_delay(1.0, now=100.25) == 0.75
    assert aligned_delay(1.0, now=100.0) == 1.0  # just polled on the tick: the next one
    assert aligned_delay(5.0, now=103.0) == 2.0
    # two collectors finishing at different moments fire together next time
    assert 100.2 + aligned_delay(1.0, now=100.2) == 100.9 + aligned_delay(1.0, now=100.9)


def test_one_poll_a_tick_takes_every_collector_due_in_order():
    from keel.ui.polling import PollSchedule

    schedule = PollSchedule({"tunnel": 1.0, "latency": 0.5, "tuning": 5.0, "verdict": 1.0})
    assert schedule.due(100.0) == ["tunnel", "latency", "tuning", "verdict"]  # all at first
    schedule.polled(schedule.due(100.0), 100.0)
    assert schedule.delay(100.0) == 0.5
    assert schedule.due(100.5) == ["latency"]
    schedule.polled(["latency"], 100.5)
    # a tick that fires a little early still takes its collectors, once
    assert schedule.due(100.98) == ["tunnel", "latency", "verdict"]
    schedule.polled(["tunnel", "latency", "verdict"], 100.98)
    assert schedule.due(101.0) == []
    assert schedule.due(105.0) == ["tunnel", "latency", "tuning", "verdict"]
    schedule.all_due()  # the r key
    assert schedule.due(105.2) == ["tunnel", "latency", "tuning", "verdict"]


def test_a_long_ipv6_target_keeps_its_start_and_end_in_its_column():
    from keel.ui.panels import target_cell
    assert target_cell("10.77.0.1") == "10.77.0.1"
    assert target_cell("fd00:77:0:1::22") == "fd00:77:0:1::22"  # 15: fits
    cell = target_cell("2001:db8:100:1::1")
    assert len(cell) == 15 and cell.startswith("2001:d") and cell.endswith(":1::1")


def test_the_tunnels_cost_names_one_cpu_in_the_singular():
    """A one-vCPU VPS (the commonest hub): "of 1 CPU", not "of 1 CPUs"."""
    from keel.metrics.snapshots import CoreStat, CpuSnapshot, TunnelCost

    def line(ncpus: int) -> str:
        cost = TunnelCost(softirq_seconds=0.3, crypt_seconds=0.2, wall_seconds=1.0,
                          ncpus=ncpus, tunnel_bytes=None)
        cores = tuple(CoreStat(f"cpu{i}", 0.1, 0.1, 0.1, 0.0, 0.7) for i in range(ncpus))
        return next(t.plain for t in panels.cpu_lines(CpuSnapshot(cores=cores, cost=cost))
                    if t.plain.startswith("tunnel"))

    assert line(1) == "tunnel 0.50 core = 50% of 1 CPU"
    assert line(4) == "tunnel 0.50 core = 12% of 4 CPUs"
