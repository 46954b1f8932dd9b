"""keel.verdicts' "line_dropped": adaptive CAKE's rate in a direction held
well below its base (under ADAPT_DROPPED_SHARE of it) while the latency
through the tunnel stays low: the line's capacity fell and CAKE followed.
Informational (severity ok), held over the window like every rule."""

from __future__ import annotations

from keel.doctor.watch import cake_rates, line
from keel.metrics.snapshots import CakeAdaptive, CakeDirection, CakeSnapshot
from keel.metrics.verdict import VerdictSnapshot, signals_from
from keel.thresholds import ADAPT_DROPPED_SHARE
from keel.verdicts import Signals, judge, worst

T0 = 1_700_000_000.0


def seconds(n: int = 10, **per_second) -> list[Signals]:
    """n seconds; a list value gives each second its own (the last repeats)."""
    out = []
    for i in range(n):
        kw = {"latency_tunnel_ms": 6.0, "latency_tunnel_idle_ms": 4.8}
        kw |= {k: (v[min(i, len(v) - 1)] if isinstance(v, list) else v)
               for k, v in per_second.items()}
        out.append(Signals(t=T0 + i, **kw))
    return out


def causes(history: list[Signals]) -> list[str]:
    return [v.cause for v in judge(history)]


def test_the_line_dropped_up_and_cake_followed():
    history = seconds(adapt_up_kbit=1100, adapt_up_base_kbit=1800)
    (v,) = judge(history)
    assert v.cause == "line_dropped" and v.severity == "ok"  # informational, not a failure
    assert v.text == "the line dropped to 1.1 Mbit/s up (base 1.8): CAKE followed"
    assert v.evidence["up"] == {"rate_kbit": 1100, "base_kbit": 1800, "share": 0.611,
                                "low_seconds": 10}
    assert v.evidence["tunnel_excess_ms"] == 1.2 and "down" not in v.evidence
    assert worst(judge(history)) == v  # what the NOW line and doctor --watch show


def test_both_ways_fit_the_now_line():
    history = seconds(adapt_up_kbit=1100, adapt_up_base_kbit=1800,
                      adapt_down_kbit=12_300, adapt_down_base_kbit=36_000)
    (v,) = judge(history)
    assert v.text == ("the line dropped to 1.1 Mbit/s up, 12.3 down (bases 1.8, 36.0): "
                      "CAKE followed")
    assert len(v.text) <= 80


def test_a_rate_near_its_base_is_no_drop():
    base = 1800
    near = seconds(adapt_up_kbit=base * ADAPT_DROPPED_SHARE + 1, adapt_up_base_kbit=base)
    assert causes(near) == ["healthy"]
    above = seconds(adapt_up_kbit=2000, adapt_up_base_kbit=base)  # raised, up to its max
    assert causes(above) == ["healthy"]


def test_a_fixed_rate_is_never_a_drop():
    assert causes(seconds(adapt_up_kbit=None, adapt_up_base_kbit=None)) == ["healthy"]
    assert causes(seconds(adapt_up_kbit=500, adapt_up_base_kbit=None)) == ["healthy"]


def test_it_must_hold_over_the_window():
    # one cut for two seconds, then back at the base: CAKE's own work, not the line
    brief = seconds(adapt_up_kbit=[900, 900, 1800], adapt_up_base_kbit=1800)
    assert causes(brief) == ["healthy"]
    # the last 6 of 10 seconds: most of the window
    late = seconds(adapt_up_kbit=[1800] * 4 + [900], adapt_up_base_kbit=1800)
    assert causes(late) == ["line_dropped"]
    assert judge(late)[0].evidence["up"]["low_seconds"] == 6
    assert causes(late[:3]) == ["healthy"]


def test_not_while_the_latency_is_bloated():
    history = seconds(adapt_up_kbit=900, adapt_up_base_kbit=1800, latency_tunnel_ms=60.0,
                      tunnel_mbit=20.0)
    assert "line_dropped" not in causes(history)
    assert "bloat" in causes(history)  # what the user must hear about


def test_unknown_latency_does_not_hide_it():
    history = [Signals(t=T0 + i, adapt_down_kbit=2000, adapt_down_base_kbit=3600)
               for i in range(10)]
    assert causes(history) == ["line_dropped"]
    assert judge(history)[0].evidence["tunnel_excess_ms"] is None


def test_a_warning_ranks_before_it():
    history = seconds(adapt_up_kbit=900, adapt_up_base_kbit=1800, clock_mhz=1200.0,
                      clock_max_mhz=2400.0)
    assert causes(history) == ["clock", "line_dropped"]


def cake(rate_bps: int, adaptive: bool) -> CakeSnapshot:
    return CakeSnapshot((
        CakeDirection("egress", "eth0", rate_bps, 800_000.0, 0, 0, 0, (),
                      CakeAdaptive(900_000, 1_800_000, 2_000_000) if adaptive else None),
        CakeDirection("ingress", "ifb4eth0", 36_000_000, 1e6, 0, 0, 0, ())))


def test_the_signals_carry_the_adaptive_rate_and_its_base():
    s = signals_from(T0, cake=cake(1_100_000, adaptive=True))
    assert (s.adapt_up_kbit, s.adapt_up_base_kbit) == (1100, 1800)
    assert (s.adapt_down_kbit, s.adapt_down_base_kbit) == (None, None)  # fixed
    fixed = signals_from(T0, cake=cake(1_100_000, adaptive=False))
    assert fixed.adapt_up_kbit is None and fixed.adapt_up_base_kbit is None


def test_doctor_watch_prints_it_with_the_rates_now():
    history = seconds(adapt_up_kbit=1100, adapt_up_base_kbit=1800)
    snap = VerdictSnapshot(history[-1], judge(history), None, tuple(history))
    printed = line(snap, cake(1_100_000, adaptive=True))
    assert printed.endswith("cake up 1.1M down 36.0M adaptive  | the line dropped to "
                            "1.1 Mbit/s up (base 1.8): CAKE followed")
    assert cake_rates(cake(1_100_000, adaptive=False)) == "  cake up 1.1M down 36.0M"
