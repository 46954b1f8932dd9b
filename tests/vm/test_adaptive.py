"""Adaptive CAKE in the lab (issue: CAKE that follows the line): `lan` ->
`edge` -> `isp` (a bloated FIFO whose rates change on a schedule) -> `hub`,
CAKE on the edge's tunnel, loaded both ways through it by iperf3 --bidir.

Three runs on the same schedule, side by side in one lab: no CAKE (what the
line carries for TCP, its FIFO full), CAKE fixed at the first phase's rates,
adaptive. (`make bench` runs a fourth, fixed at the lowest: what playing safe
loses; no verdict here reads it, so the suite does not spend its minute.) Adaptive is judged
against runs of the same lab (tests/lab/autorate.py): its latency against
fixed-at-first's, its goodput against no CAKE's; never against a fixed
number of milliseconds. Then the peer going away and coming
back. Absolute figures: `make bench` (bench/adaptive.py)."""

from __future__ import annotations

import time

import pytest

from tests.lab import autorate, configs, figures
from tests.lab import topology as topo
from tests.lab.throttle import throttled

# latency under load: its verdicts measure the host's spare CPU, and it
# needs the host to itself: the controller ignores (rightly) the seconds in
# which the edge's own CPU stalled, and beside the main and side lanes, with
# the quiet lane's guests first for the host, the edge's stall meter still saw
# 40-117 ms (every move "stall: skipped"), the rates never followed the line
# and the module failed; run last in the quiet lane, the others stepped aside
# (an idle CPU group) or ended
# (first: keel's config on both, before the wait for the host)
pytestmark = [pytest.mark.lab("bloated"), pytest.mark.host_alone(first=("hub_pub",))]

# adaptive's +p95 under load (the whole run) at most this share of
# fixed-at-first's (the issue's), over the floor any shaper pays at the
# schedule's lowest rates (autorate.floor_ms: 31 ms at the full schedule).
# Seen: 0.15-0.16 over the run; its worst phase (the line at its lowest)
# 0.22-0.24 of fixed's worst; at 0.6 of the schedule with most of a core
# busy beside it, 93 against 387 ms, the floor 52 ms
MAX_P95_SHARE = 0.25
# the scenarios the verdicts below read (autorate.scenarios() has one more)
JUDGED = ("no CAKE", "fixed at first", "adaptive")
# adaptive's goodput (both ways) at least this share of what the line carried
# with no CAKE in the same lab (the "capacity the schedule offered":
# TCP through the tunnel gets about nine tenths of the line's wire rate, so
# the wire rate itself would ask for more than any shaper can give)
MIN_GOODPUT_SHARE = 0.80


@pytest.fixture(scope="module")
def hub_pub(shared_lab) -> str:
    first = autorate.SCHEDULE[0]
    return configs.configure_with_keel(shared_lab, download=first.down_kbit * 9 // 10,
                                       upload=first.up_kbit * 9 // 10, attach="tunnel")


@pytest.fixture(scope="module")
def schedule(shared_lab, hub_pub) -> tuple[autorate.Phase, ...]:
    """The issue's schedule, slowed down as a whole if this host cannot carry
    its first phase through CAKE with the edge's CPU to spare
    (autorate.fitted): the verdicts compare runs on the same schedule."""
    fitted, seen = autorate.fitted(shared_lab, hub_pub)
    figures.record("adaptive CAKE: the schedule fitted to the host", {}, tries=seen,
                   schedule=str(fitted))
    if fitted != autorate.SCHEDULE:
        print(f"\n*** LAB WARNING: the edge's CPU was too busy at the issue's rates "
              f"({seen}): the line at {seen[-1]['scale']:.2f} of them", flush=True)
    return fitted


@pytest.fixture(scope="module")
def runs(shared_lab, hub_pub, schedule) -> dict[str, autorate.Run]:
    out = {}
    for scenario in (s for s in autorate.scenarios(schedule) if s.name in JUDGED):
        autorate.configure(shared_lab, hub_pub, scenario)
        out[scenario.name] = autorate.run(shared_lab, scenario, schedule)
        got = out[scenario.name]
        print(f"\n{scenario.name}: idle {got.idle_ms:.1f} ms, under load +p50 {got.p50} "
              f"+p95 {got.p95} ms")
        for phase in out[scenario.name].phases:
            print("   ", phase)
        if scenario.adaptive:
            log = autorate.adapt_log(shared_lab.edge)
            kinds: dict[str, int] = {}
            for r in log:
                kinds[f"{r['dir']} {r['kind']}"] = kinds.get(f"{r['dir']} {r['kind']}", 0) + 1
            print("    changes:", kinds)
            print("    down:", [r["rate_kbit"] for r in log if r["dir"] == "down"][-60:])
            print("    up:", [r["rate_kbit"] for r in log if r["dir"] == "up"][-60:])
    figures.record("adaptive CAKE on a changing line", {"schedule": str(schedule)},
                   **{name: run.phases for name, run in out.items()})
    return out


def test_adaptive_keeps_latency_low_where_fixed_rates_bloat(runs, schedule) -> None:
    fixed, adaptive = runs["fixed at first"], runs["adaptive"]
    assert fixed.p95 > 100, ("the schedule's drop did not bloat the fixed run", fixed.phases)
    floor = autorate.floor_ms(schedule)
    assert adaptive.p95 <= floor + MAX_P95_SHARE * (fixed.p95 - floor), (
        adaptive.p95, fixed.p95, floor, adaptive.phases, fixed.phases)


def test_adaptive_keeps_most_of_the_lines_capacity(runs, schedule) -> None:
    line, adaptive = runs["no CAKE"], runs["adaptive"]
    capacity = line.total("down_kbit") + line.total("up_kbit")
    got = adaptive.total("down_kbit") + adaptive.total("up_kbit")
    down, up = autorate.offered(schedule)
    assert capacity >= 0.6 * (down + up), ("the line carried too little", line.phases)
    assert got >= MIN_GOODPUT_SHARE * capacity, (adaptive.phases, line.phases)


def test_each_rate_change_is_logged_with_its_reason(shared_lab, runs) -> None:
    log = autorate.adapt_log(shared_lab.edge)
    kinds = {(r["dir"], r["kind"]) for r in log}
    assert {("down", "cut"), ("up", "cut")} <= kinds, log[-20:]
    assert any(k == "raise" for _, k in kinds), log[-20:]
    cut = next(r for r in log if r["kind"] == "cut")
    assert cut["reason"].startswith("delay +") and cut["rate_kbit"] < cut["from_kbit"]


def test_a_silent_peer_gives_the_base_and_its_return_is_seen(shared_lab, hub_pub,
                                                            schedule) -> None:
    """The hub stops answering (its reflector's port dropped): within
    ADAPT_PEER_LOST_S the rates are the base; when it answers again the
    probes are answered again."""
    from keel.thresholds import ADAPT_PEER_LOST_S

    edge, hub = shared_lab.edge, shared_lab.hub
    adaptive = next(s for s in autorate.scenarios(schedule) if s.adaptive)
    autorate.configure(shared_lab, hub_pub, adaptive)
    # a low rate first (the line at its lowest, loaded): not the base
    isp = shared_lab.isp
    low = schedule[1]
    isp.check(autorate.set_line(isp, low.down_kbit, low.up_kbit))
    edge.check(f"iperf3 -c {topo.HUB_TUNNEL} --bidir -t 12 >/dev/null 2>&1; true", 60)
    before = edge.json("cat /run/keel/adapt.json")
    assert before["down"]["rate_kbit"] < adaptive.down_kbit, before
    hub.check("nft insert rule inet keel input udp dport 51821 drop")
    try:
        deadline = time.monotonic() + edge.accel.scale(ADAPT_PEER_LOST_S + 15)
        while True:  # adapt.json is rewritten once a second
            now = edge.json("cat /run/keel/adapt.json")
            at_base = (now["down"]["rate_kbit"], now["up"]["rate_kbit"]) == (
                adaptive.down_kbit, adaptive.up_kbit)
            if at_base or time.monotonic() > deadline:
                break
            time.sleep(1)
        assert at_base, now
        assert now["peer_silent_s"] >= ADAPT_PEER_LOST_S, now
        last = autorate.adapt_log(edge)[-2:]
        assert any(r["reason"].startswith("peer silent") for r in last), last
    finally:
        hub.check("keel apply", 60)  # the drop rule is drift: keel's ruleset again
    edge.until("test \"$(sed -n 's/.*\"peer_silent_s\": \\([0-9.]*\\).*/\\1/p' "
               "/run/keel/adapt.json | cut -d. -f1)\" -lt 2", 30)


def test_a_starved_hub_is_no_reason_to_cut(shared_lab, hub_pub, schedule) -> None:
    """The hub's QEMU stopped 150 ms of every 250 (a throttled VPS, as in the
    starving lab) on a steady line, loaded both ways: its answers carry its
    stalls, so the delays they cause cut nothing ("stall: skipped"). The max
    is the base here, so no raise can take the rate over the line: any cut
    would be a cut for the stalls."""
    edge, hub, isp = shared_lab.edge, shared_lab.hub, shared_lab.isp
    first = schedule[0]
    down, up = first.down_kbit * 9 // 10, first.up_kbit * 9 // 10
    steady = autorate.Scenario("adaptive, no room above the base", down, up,
                               (down // 2, down, up // 2, up))
    autorate.configure(shared_lab, hub_pub, steady)
    isp.check(autorate.set_line(isp, first.down_kbit, first.up_kbit))
    seen = len(autorate.adapt_log(edge))
    with throttled(hub.child.pid, 0.15, 0.10):
        edge.check(f"iperf3 -c {topo.HUB_TUNNEL} --bidir -t 15 >/dev/null 2>&1; true", 120)
    log = autorate.adapt_log(edge)[seen:]
    kinds = [r["kind"] for r in log]
    assert "stall-skipped" in kinds, log
    assert "cut" not in kinds, [r for r in log if r["kind"] == "cut"]
    assert any(r["reason"].startswith("stall: skipped") for r in log), log

