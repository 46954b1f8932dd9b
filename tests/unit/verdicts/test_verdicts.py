"""keel.verdicts: traces of live signals (one row a second, from the tables
below) turned into named causes, worst first."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from keel import verdicts
from keel.verdicts import Signals, Verdict, as_dict, judge, worst

T0 = 1_700_000_000.0


def _per_core(field: str, cpu: str) -> Callable[[str, dict[str, Any]], None]:
    def put(cell: str, kw: dict[str, Any]) -> None:
        kw.setdefault(field, {})[cpu] = float(cell) / 100

    return put


def _plain(field: str, convert: Callable[[str], Any] = float) -> Callable[[str, dict], None]:
    def put(cell: str, kw: dict[str, Any]) -> None:
        kw[field] = convert(cell)

    return put


# table column -> how it fills Signals (percentages in %, latencies in ms)
COLUMNS: dict[str, Callable[[str, dict[str, Any]], None]] = {
    "p99": _plain("stall_p99_ms"),
    "max": _plain("stall_max_ms"),
    "steal%": _plain("steal", lambda c: float(c) / 100),
    "tun": _plain("latency_tunnel_ms"),
    "tun0": _plain("latency_tunnel_idle_ms"),
    "out": _plain("latency_outside_ms"),
    "out0": _plain("latency_outside_idle_ms"),
    "mbit": _plain("tunnel_mbit"),
    "wgcpu": _plain("tunnel_cpu"),
    "backlog": _plain("cake_backlog_bytes", int),
    "drops": _plain("cake_drops", int),
    "mhz": _plain("clock_mhz"),
    "load": _plain("load_average"),
    **{f"busy{n}%": _per_core("busy", f"cpu{n}") for n in range(4)},
    **{f"sirq{n}%": _per_core("softirq", f"cpu{n}") for n in range(4)},
}


def trace(table: str, **fixed: Any) -> list[Signals]:
    """A row a second; '-' leaves a signal unknown; `fixed` holds for every row."""
    rows = [line.split() for line in table.strip().splitlines()
            if line.strip() and not line.lstrip().startswith("#")]
    header, body = rows[0], rows[1:]
    out = []
    for i, row in enumerate(body):
        kw: dict[str, Any] = dict(fixed)
        for name, cell in zip(header, row, strict=True):
            if cell != "-":
                COLUMNS[name](cell, kw)
        out.append(Signals(t=T0 + i, **kw))
    return out


def causes(history: list[Signals]) -> list[str]:
    return [v.cause for v in judge(history)]


# The field case: a burstable VPS. Load average 0.2, the host reports no steal,
# yet the vCPU is taken away for 80-400 ms at a time; pings through the tunnel
# swing while the peer outside the tunnel stays flat.
STARVING = """
p99  max  steal%  tun  tun0  out  out0  busy0%  busy1%  load
 60  180  0       170  20    31   30    4       3       0.2
 95  400  0       380  20    30   30    5       2       0.2
 40   80  0        95  20    32   30    3       4       0.2
  1    2  0        21  20    30   30    4       3       0.2
120  310  0       260  20    29   30    6       5       0.2
 70  150  0       170  20    30   30    3       2       0.2
  1    3  0        22  20    31   30    4       4       0.2
 85  220  0       190  20    30   30    5       3       0.2
 50   95  0       120  20    30   30    4       2       0.2
 90  260  0       240  20    31   30    3       3       0.2
"""


def test_a_starving_vps_that_reports_no_steal():
    found = judge(trace(STARVING, steal_reported=False))
    top = found[0]
    assert top.cause == "starved" and top.severity == "bad"
    assert "400 ms" in top.text  # the worst stall
    assert "reports none" in top.text  # this hypervisor accounts no steal
    assert "steal 0 %" in top.text
    assert "load average 0.2" in top.text
    assert top.evidence["stall_max_ms"] == 400
    assert top.evidence["stalled_seconds"] == 7  # 40 ms at p99 and 80 at worst: not a stall
    assert top.evidence["steal_reported"] is False
    assert "bloat" not in [v.cause for v in found]  # the link outside is flat
    assert "healthy" not in [v.cause for v in found]


STEALING = """
steal%  tun  tun0  out  out0  busy0%  load
25      60   20    30   30    70      0.9
27      75   20    30   30    72      0.9
22      55   20    31   30    68      0.9
26      80   20    30   30    71      0.9
24      65   20    30   30    69      0.9
"""


def test_a_hypervisor_that_reports_25_percent_steal():
    found = judge(trace(STEALING, steal_reported=True))
    assert found[0].cause == "starved" and found[0].severity == "bad"
    assert "steal 25 %" in found[0].text
    assert "reports none" not in found[0].text
    assert found[0].evidence["steal_seconds"] == 5


CPU_BOUND = """
p99  max  mbit  busy0%  sirq0%  busy1%  sirq1%  tun  tun0  out  out0
0.4  1.5  80    99      97      20      2       28   20    30   30
0.5  1.8  80    98      97      22      2       29   20    30   30
0.3  1.2  81    99      98      18      1       27   20    31   30
0.4  1.9  80    98      96      21      2       30   20    30   30
0.6  1.7  80    99      97      19      2       28   20    30   30
0.4  1.4  79    97      96      23      2       29   20    30   30
"""


def test_a_cpu_bound_tunnel_is_not_starvation():
    found = judge(trace(CPU_BOUND, steal_reported=False))
    assert found[0].cause == "cpu_bound" and found[0].severity == "bad"
    assert found[0].text.startswith("the tunnel is CPU-bound on cpu0: softirq 97 %")
    assert "80 Mbit/s" in found[0].text
    assert found[0].evidence["cores"] == ["cpu0"]
    assert "starved" not in [v.cause for v in found]


BLOATED = """
p99  max  mbit  tun  tun0  out  out0  busy0%
0.4  1.0  40    130  20    125  20    30
0.5  1.2  42    140  20    135  20    31
0.3  0.9  41    118  20    110  20    29
0.4  1.1  40    125  20    120  20    30
0.5  1.0  39    122  20    115  20    30
0.4  1.3  40    130  20    125  20    28
"""


def test_a_bloated_link_without_cake():
    found = judge(trace(BLOATED, cake_on=False))
    assert causes(trace(BLOATED, cake_on=False)) == ["bloat"]
    assert found[0].severity == "bad"
    assert found[0].text == ("the link is bloated: latency rises with load outside the tunnel "
                             "too (+102 ms); CAKE is off")
    assert found[0].evidence["seen"] == "outside"


def test_a_bloated_link_with_cake_above_its_rate():
    found = judge(trace(BLOATED, cake_on=True))
    assert found[0].cause == "bloat"
    assert found[0].text.endswith("; CAKE is set above the link's rate")


def test_tunnel_latency_rising_without_cake_is_bloat_when_the_outside_is_unknown():
    table = "\n".join(" ".join(row.split()[:5]) for row in BLOATED.strip().splitlines())
    found = judge(trace(table, cake_on=False))
    assert found[0].cause == "bloat"
    assert "through the tunnel" in found[0].text and found[0].text.endswith("CAKE is off")
    # CAKE on and holding no queue: the rise is not the link's queue
    assert causes(trace(table, cake_on=True, cake_backlog_bytes=1000)) == ["healthy"]
    # CAKE on but holding a big queue
    big = judge(trace(table, cake_on=True, cake_backlog_bytes=512 * 1024))
    assert big[0].cause == "bloat" and "CAKE holds 512 KiB" in big[0].text


BUSY_BUT_HEALTHY = """
p99  max  mbit  busy0%  sirq0%  busy1%  sirq1%  tun  tun0  out  out0  load
0.3  0.8  5     100     1       100     1       21   20    30   30    4.1
0.2  0.6  5     100     1       100     1       20   20    31   30    4.1
0.4  0.9  5     100     1       100     1       22   20    30   30    4.0
0.3  0.7  5     100     1       100     1       21   20    30   30    4.0
0.2  0.5  5     100     1       100     1       20   20    29   30    4.0
0.3  0.8  5     100     1       100     1       21   20    30   30    3.9
"""


def test_a_busy_but_healthy_cpu_is_not_starved():
    assert causes(trace(BUSY_BUT_HEALTHY, steal_reported=False)) == ["healthy"]


def test_without_real_time_priority_stalls_on_a_busy_cpu_are_load_not_starvation():
    history = trace(BUSY_BUT_HEALTHY.replace(" 0.8 ", " 90 "), stall_realtime=False)
    history = [Signals(**{**vars(s), "stall_max_ms": 150.0, "latency_tunnel_ms": 60.0})
               for s in history]
    assert "starved" not in causes(history)
    # at real-time priority the same figures are the hypervisor's doing
    rt = [Signals(**{**vars(s), "stall_realtime": True}) for s in history]
    assert causes(rt)[0] == "starved"


HEALTHY = """
p99  max  mbit  busy0%  busy1%  tun  tun0  out  out0  mhz  load
0.3  0.6  12    8       5       21   20    30   30    2400  0.1
0.2  0.5  11    7       6       20   20    31   30    2400  0.1
0.3  0.7  12    9       5       22   20    30   30    2400  0.1
0.2  0.6  13    8       4       21   20    30   30    2400  0.1
0.3  0.5  12    7       5       20   20    29   30    2400  0.1
0.2  0.6  12    8       6       21   20    30   30    2400  0.1
0.3  0.7  11    9       5       22   20    30   30    2400  0.1
0.2  0.5  12    8       5       20   20    31   30    2400  0.1
0.3  0.6  12    7       4       21   20    30   30    2400  0.1
0.2  0.6  12    8       5       21   20    30   30    2400  0.1
"""


def test_healthy_is_exactly_one_verdict():
    found = judge(trace(HEALTHY, clock_max_mhz=2400.0, steal_reported=True))
    assert len(found) == 1
    assert found[0].cause == "healthy" and found[0].severity == "ok"
    assert found[0].text == "healthy"
    assert found[0].evidence["seconds"] == 10


def test_one_isolated_long_stall_is_not_starvation():
    rows = HEALTHY.strip().splitlines()
    rows[5] = "300  300  12  8  5  290  20  30  30  2400  0.1"  # one 300 ms stall, one late ping
    found = judge(trace("\n".join(rows), clock_max_mhz=2400.0))
    assert [v.cause for v in found] == ["healthy"]
    assert found[0].evidence["stall_max_ms"] == 300


def test_stalls_held_are_starvation_even_when_the_routers_own_probes_are_on_time():
    # the router's own pings run in step with the stalls: the lab's starved hub
    # saw its own probes +18 ms at most while the LAN's p95 rose by 130 ms
    table = "\n".join(" ".join(r.split()[:3]) for r in STARVING.strip().splitlines())
    found = judge(trace(table))
    assert found[0].cause == "starved" and found[0].severity == "bad"
    assert "tunnel latency unknown" in found[0].text
    flat = [Signals(**{**vars(s), "latency_tunnel_ms": 21.0, "latency_tunnel_idle_ms": 20.0})
            for s in trace(table)]
    assert judge(flat)[0].cause == "starved"


def test_the_clock_at_half_its_maximum():
    found = judge(trace(HEALTHY.replace("2400", "1200"), clock_max_mhz=2400.0))
    assert [v.cause for v in found] == ["clock"]
    assert found[0].severity == "warn"
    assert found[0].text == "CPU clock at 50 % of its maximum (1200 of 2400 MHz)"


def test_deep_idle_states_allowed():
    found = judge(trace(HEALTHY, deep_idle_allowed=("C6", "C3"),
                        deep_idle_exit_us={"C6": 133}))
    assert [v.cause for v in found] == ["idle"]
    assert found[0].text == "deep idle states allowed: C6 (exit 133 us), C3"


def test_worst_first_and_only_the_window_counts():
    starving = trace(STARVING)
    slow_and_starving = [Signals(**{**vars(s), "clock_mhz": 1200.0, "clock_max_mhz": 2400.0})
                         for s in starving]
    found = judge(slow_and_starving)
    assert [v.cause for v in found] == ["starved", "clock"]
    assert worst(found) == found[0] and worst(list(reversed(found))) == found[0]
    # ten healthy seconds after it: the starvation has left the window
    later = [Signals(**{**vars(s), "t": s.t + 10}) for s in trace(HEALTHY)]
    assert causes(starving + later) == ["healthy"]
    assert causes(starving + later[:5]) == ["starved"]
    assert judge(starving + later, window_s=20)[0].cause == "starved"


def test_no_history_no_verdict():
    assert judge([]) == ()
    with pytest.raises(ValueError):
        worst(())
    assert as_dict(()) == {"worst": None, "severity": None, "verdicts": []}


def test_as_dict_is_json():
    found = judge(trace(STARVING))
    data = json.loads(json.dumps(as_dict(found)))
    assert data["worst"] == "starved" and data["severity"] == "bad"
    assert data["verdicts"][0] == found[0].as_dict()
    assert set(data["verdicts"][0]) == {"cause", "severity", "text", "evidence"}


def test_verdicts_and_signals_are_frozen_and_the_thresholds_named():
    v = Verdict("healthy", "ok", "healthy")
    with pytest.raises(AttributeError):
        v.cause = "starved"  # type: ignore[misc]
    with pytest.raises(AttributeError):
        Signals(t=0.0).steal = 0.5  # type: ignore[misc]
    assert verdicts.STALL_P99_MS == 50 and verdicts.STALL_MAX_MS == 100
    assert verdicts.STEAL_BAD == 0.10 and verdicts.BLOAT_MARGIN_MS == 30
    assert set(verdicts.CAUSES) == {"starved", "cpu_bound", "bloat", "far_end", "tunnel_path",
                                    "clock", "idle", "line_dropped", "healthy"}


# The edge of the lab's starving hub: the whole VPS is stopped on a duty cycle,
# so the hub answers late inside the tunnel and outside it alike, while the
# edge carries almost nothing and its own CPU is fine.
FAR_END = """
p99  max  tun  tun0  out  out0  mbit  busy0%
  0    1  140  12    130  3     0.2   8
  0    1   90  12     95  3     0.2   7
  0    1  160  12    150  3     0.2   9
  0    1   60  12     70  3     0.2   8
  0    1  120  12    110  3     0.2   8
  0    1  150  12    140  3     0.2   7
  0    1   20  12     10  3     0.2   8
  0    1  130  12    120  3     0.2   9
"""


def test_a_far_end_that_answers_late_is_not_bloat_here():
    found = judge(trace(FAR_END, cake_on=True, cake_backlog_bytes=0))
    assert [v.cause for v in found] == ["far_end"]
    assert found[0].severity == "warn"
    assert "answers late: +118 ms through the tunnel and +117 ms outside" in found[0].text


# The field case of issue 21: the dashboard said "healthy" with the tunnel 36 ms
# over its idle baseline and the probe outside it at +7.5 ms, under load, CAKE
# holding little, no core saturated, no stall.
TUNNEL_ONLY = """
p99  max  tun  tun0  out   out0  mbit  backlog  busy0%  busy1%
  1    2   58  20    11.0  3.5   38    3000     45      30
  1    3   55  20    11.5  3.5   40    2500     48      31
  1    2   56  20    10.5  3.5   39    3100     44      29
  1    2   57  20    11.0  3.5   41    2800     46      32
  1    2   21  20     4.0  3.5   37    1000     40      30
  1    2   56  20    11.0  3.5   40    2900     47      30
  1    2   54  20    10.5  3.5   38    2700     45      31
  1    2   58  20    11.0  3.5   39    3000     46      30
"""


def test_a_rise_inside_the_tunnel_only_is_named_with_its_figures():
    found = judge(trace(TUNNEL_ONLY, cake_on=True))
    assert [v.cause for v in found] == ["tunnel_path"]  # not "healthy"
    v = found[0]
    assert v.severity == "warn"
    assert v.text == ("latency rises in the tunnel only: +36 ms (outside +8): "
                      "the peer's side or path")
    assert len(v.text) <= 80  # the dashboard's NOW line
    assert v.evidence["late_seconds"] == 7 and v.evidence["tunnel_excess_ms"] == 36.0
    assert v.evidence["outside_excess_ms"] == 7.5
    # with no load too: the peer's side is not a queue here
    idle = [Signals(**{**vars(s), "tunnel_mbit": 0.1}) for s in trace(TUNNEL_ONLY)]
    assert causes(idle) == ["tunnel_path"]


def test_a_tunnel_only_rise_is_held_over_the_window_and_explained_away_by_causes_here():
    rows = trace(TUNNEL_ONLY, cake_on=True)
    assert causes(rows[:2]) == ["healthy"]  # two seconds are not a verdict
    # the outside rose too (half the tunnel's rise or more): not the tunnel alone
    both = [Signals(**{**vars(s), "latency_outside_ms": s.latency_outside_ms + 14})
            for s in rows]
    assert "tunnel_path" not in causes(both)
    # CAKE full: a queue here, not the tunnel's path
    full = [Signals(**{**vars(s), "cake_backlog_bytes": 200_000}) for s in rows]
    assert "tunnel_path" not in causes(full)
    # a saturated core: this router's CPU, not the path
    hot = [Signals(**{**vars(s), "busy": {"cpu0": 0.97, "cpu1": 0.3},
                      "softirq": {"cpu0": 0.8}}) for s in rows]
    assert "tunnel_path" not in causes(hot) and causes(hot)[0] == "cpu_bound"
    # stalls: starved, not the path
    stalled = [Signals(**{**vars(s), "stall_p99_ms": 120.0, "stall_max_ms": 300.0})
               for s in rows]
    assert "tunnel_path" not in causes(stalled) and causes(stalled)[0] == "starved"
    # no view outside the tunnel: nothing to tell the tunnel from the link by
    blind = [Signals(**{**vars(s), "latency_outside_ms": None}) for s in rows]
    assert "tunnel_path" not in causes(blind)


def test_latency_without_load_is_not_bloat_but_with_load_it_is():
    idle = trace(FAR_END, cake_on=False)
    assert "bloat" not in causes(idle)
    loaded = [Signals(**{**s.__dict__, "tunnel_mbit": 3.5}) for s in idle]
    assert causes(loaded)[0] == "bloat"  # the same rise with traffic: a queue


def test_a_saturated_core_with_short_stalls_is_cpu_bound_and_with_long_ones_starved_too():
    # at real-time priority a core saturated by softirq delays the meter by a
    # few ms (15-22 ms at worst under emulation in the lab); a throttled VM's
    # lost time shows as busy too, and its stalls are the host's slices
    history = trace(STARVING, steal_reported=False)
    loaded = [Signals(**{**vars(s), "busy": {"cpu0": 0.99}, "softirq": {"cpu0": 0.7},
                         "system": {"cpu0": 0.2}, "tunnel_mbit": 60.0}) for s in history]
    short = [Signals(**{**vars(s), "stall_p99_ms": 18.0, "stall_max_ms": 22.0}) for s in loaded]
    assert causes(short) == ["cpu_bound"]
    assert causes(loaded)[:2] == ["starved", "cpu_bound"]
