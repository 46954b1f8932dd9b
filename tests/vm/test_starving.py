"""The starving VPS, reproduced: the hub's QEMU process stopped and continued
on a duty cycle (tests/lab/throttle.py, as a burstable VPS's host throttles
it) while the LAN client pings through the tunnel. keel on the hub must name
the starvation from its stall meter within 10 s, with the load average low
and no steal reported; keel on the edge must see the tunnel's latency rise
and not blame its own link; with the throttle off the verdict must go. The
other verdicts have their cases here too: a CPU-bound tunnel (no bottleneck,
parallel iperf3) is named cpu_bound and not starvation; the bloated isp line
without CAKE is named bloat.

Verdicts are read from `keel doctor --watch --json` running on the guests;
latency is compared with the same run's unthrottled baseline, never with a
fixed number of milliseconds. Figures go to out/lab-runs/figures.jsonl."""

from __future__ import annotations

import time

import pytest

from keel.parse import ping
from keel.selftest.grading import percentile
from tests.lab import configs, cpucap, figures
from tests.lab import topology as topo
from tests.lab.guest import Guest
from tests.lab.history import kept, written_up_to
from tests.lab.throttle import throttled
from tests.lab.watch import between, clock_offset, records, start_watch

# its verdicts measure the host's spare CPU: the quiet lane (tests/lab/lanes.py),
# and the host to itself: every guest's stall meter sees the host's other
# guests too, and beside the main and side lanes, with its guests first for
# the host, the edge named itself starved (its baseline ping p95 103 ms); last
# in the quiet lane, the others stepped aside (an idle CPU group) or ended
pytestmark = [pytest.mark.lab("bloated"), pytest.mark.host_alone]

BASELINE_S, THROTTLED_S, AFTER_S = 15, 25, 25
STOPPED_S, RUNNING_S = 0.15, 0.10  # the hub gets 40 % of the wall clock, in slices
VERDICT_WITHIN_S = 10  # the bound, from the throttle's start
GONE_WITHIN_S = 15  # after the throttle ends: the 10 s window, plus a poll or two
# A slice stopped for 150 ms adds 0-150 ms to a probe through the hub: the
# p95 rises by most of that. Half of it is held, against the same run's
# unthrottled baseline.
MIN_P95_RISE_MS = 50
# "Load average 0.2 on its one core": the throttle does not make the hub
# look busy. Under emulation keel's own watch costs the hub's vCPU 20-50 %
# (more with 40 % of the wall clock left) and the lab's set-up leaves 1-2 in
# the 1-minute average. Seen before -> at most during: 1.84 -> 1.63,
# 1.30 -> 1.01, 1.05 -> 0.89, 1.35 -> 1.74 (a busier host). Held: no more
# than one more runnable task than before, and no steal at all.
MAX_LOAD_RISE = 1.0


@pytest.fixture(scope="module")
def lab(shared_lab):
    rl = shared_lab
    configs.configure_with_keel(rl, download=0, upload=0)  # no CAKE: the bloat case needs none
    # none anywhere, also where the self-test's config had put it (the tunnel)
    assert "cake" not in rl.edge.check("tc qdisc show"), "CAKE left on after shaping went off"
    rl.lan.until(f"ping -n -c 1 -W 2 {topo.HUB_TUNNEL}", 60)
    for guest in (rl.hub, rl.edge):  # S41stall started the stall meter at boot
        guest.until("test -s /run/keel/stall.jsonl && echo ok", 30)
    return rl


@pytest.fixture(scope="module")
def starving(lab) -> dict:
    hub, edge, lan = lab.hub, lab.edge, lab.lan
    offsets = {g.name: clock_offset(g) for g in (hub, edge, lan)}
    total = BASELINE_S + THROTTLED_S + AFTER_S
    for guest in (hub, edge):
        start_watch(guest, total + 5)
    lan.check(f"rm -f /run/p; (ping -D -O -n -i 0.2 {topo.HUB_TUNNEL} > /run/p &)")
    begin = time.time()
    time.sleep(BASELINE_S)
    with throttled(hub.child.pid, STOPPED_S, RUNNING_S) as duty:
        time.sleep(THROTTLED_S)
    time.sleep(AFTER_S + 3)
    lan.check("killall ping; true")
    assert duty.started is not None and duty.ended is not None and duty.cycles > 50
    lan_samples = ping.track(lan.check("cat /run/p", 60), 0.2)
    return {"begin": begin, "on": duty.started, "off": duty.ended, "share": duty.share,
            "hub_offset": offsets["hub"],
            "hub": records(hub, offsets["hub"]), "edge": records(edge, offsets["edge"]),
            "lan": [(s.sent - offsets["lan"], s.rtt_ms) for s in lan_samples]}


def rtts(samples, start: float, end: float) -> list[float]:
    return [rtt for sent, rtt in samples if start <= sent < end and rtt is not None]


def test_the_ping_through_the_tunnel_swings_while_the_hub_idles(starving):
    base = rtts(starving["lan"], starving["begin"] + 5, starving["on"])
    hit = rtts(starving["lan"], starving["on"] + 2, starving["off"])
    assert len(base) > 30 and len(hit) > 30
    rise = percentile(hit, 95) - percentile(base, 95)
    hub_during = between(starving["hub"], starving["on"], starving["off"])
    loads = [r["signals"]["load_average"] for r in hub_during
             if r["signals"]["load_average"] is not None]
    before = [r["signals"]["load_average"] for r in
              between(starving["hub"], starving["begin"], starving["on"])
              if r["signals"]["load_average"] is not None]
    steals = [r["signals"]["steal"] for r in hub_during if r["signals"]["steal"] is not None]
    figures.record("starving hub: lan ping through the tunnel", {
        "stopped_s": STOPPED_S, "running_s": RUNNING_S},
        base_p50=round(percentile(base, 50), 1), base_p95=round(percentile(base, 95), 1),
        throttled_p50=round(percentile(hit, 50), 1), throttled_p95=round(percentile(hit, 95), 1),
        hub_load_before=max(before, default=None), hub_load_max=max(loads, default=None),
        hub_steal_max=max(steals, default=None))
    assert rise >= MIN_P95_RISE_MS, (percentile(base, 95), percentile(hit, 95))
    # the hub is not busy: it is not given the CPU
    assert loads and before and max(loads) <= max(before) + MAX_LOAD_RISE
    assert steals and max(steals) == 0  # and emulation reports no steal at all


def test_the_hub_names_its_starvation_within_10_s_and_stops_after(starving):
    hub = starving["hub"]
    on, off = starving["on"], starving["off"]
    assert between(hub, starving["begin"], on), "the hub's watch printed nothing before"
    named = [r for r in between(hub, on, off) if "starved" in r["causes"]]
    assert named, [r["causes"] for r in between(hub, on, off)]
    first = named[0]
    delay = first["host_t"] - on
    verdict = next(v for v in first["verdicts"] if v["cause"] == "starved")
    after = between(hub, off + GONE_WITHIN_S, off + AFTER_S)
    figures.record("starving hub: verdict", {"stopped_s": STOPPED_S, "running_s": RUNNING_S},
                   seconds_to_verdict=round(delay, 1), text=verdict["text"],
                   evidence=verdict["evidence"],
                   after=[r["causes"][0] for r in after])
    assert delay <= VERDICT_WITHIN_S
    assert verdict["evidence"]["stall_max_ms"] >= 50  # the slices, seen from inside
    assert verdict["evidence"]["steal_reported"] is False
    assert "reports none" in verdict["text"]
    assert after and not any("starved" in r["causes"] for r in after)


def test_the_hubs_starved_seconds_are_kept_in_its_history(starving, lab):
    """The history daemon on the hub kept the throttled seconds with their
    cause and its words, as the console named them live."""
    on, off = (starving[k] + starving["hub_offset"] for k in ("on", "off"))
    written_up_to(lab.hub, off)
    points = kept(lab.hub, on, off + 10)
    named = [p for p in points if "starved" in p["causes"]]
    assert named, [(p["t"], p["causes"]) for p in points]
    assert any("stalls up to" in p["evidence"] for p in named), named


def test_the_edge_sees_the_tunnel_late_and_does_not_blame_its_link(starving):
    def excess(records: list[dict], key: str) -> list[float]:
        return [r["signals"][key] - r["signals"]["latency_tunnel_idle_ms"] for r in records
                if r["signals"][key] is not None
                and r["signals"]["latency_tunnel_idle_ms"] is not None]

    before = between(starving["edge"], starving["begin"] + 5, starving["on"])
    edge = between(starving["edge"], starving["on"] + 2, starving["off"])
    assert before and edge
    # each second's slowest probe through the tunnel, against the same run's
    # seconds before the throttle: a probe that meets a stopped slice waits up
    # to its 150 ms, and most seconds hold one (the lan's ping, above, rises
    # as much); each second's median probe is later too
    worst_before, worst = excess(before, "latency_tunnel_worst_ms"), excess(
        edge, "latency_tunnel_worst_ms")
    median_before, median = excess(before, "latency_tunnel_ms"), excess(
        edge, "latency_tunnel_ms")
    assert worst_before and worst and median_before and median, (before, edge)
    causes = {c for r in edge for c in r["causes"]}
    figures.record("starving hub: the edge", {},
                   worst_excess_p50_before=round(percentile(worst_before, 50), 1),
                   worst_excess_p50=round(percentile(worst, 50), 1),
                   tunnel_excess_p50_before=round(percentile(median_before, 50), 1),
                   tunnel_excess_p50=round(percentile(median, 50), 1), causes=sorted(causes))
    assert percentile(worst, 50) - percentile(worst_before, 50) >= MIN_P95_RISE_MS, (
        worst_before, worst)
    assert percentile(median, 50) > percentile(median_before, 50), (median_before, median)
    assert "starved" not in causes  # the edge's own CPU is given back in time
    assert "bloat" not in causes  # nothing queues here: there is no load


def dominant(causes: list[list[str]], cause: str) -> bool:
    """`cause` named in at least a third of the seconds, and more often than
    starvation: four emulated guests on two host cores are descheduled by
    the host now and then, which a guest's stall meter rightly sees (49 ms at
    worst seen, under the starvation threshold; a slower host may see more)."""
    named = sum(cause in c for c in causes)
    starved = sum("starved" in c for c in causes)
    assert named >= len(causes) / 3 and named > starved, causes
    return True


def watch_during(guest: Guest, load_s: int, load: str, name: str, idle_s: int = 8) -> list[dict]:
    """`keel doctor --watch` over `idle_s` of idle line, then the load."""
    settle(guest)
    offset = clock_offset(guest)
    start_watch(guest, idle_s + load_s + 4, name)
    guest.check(f"sleep {idle_s}")
    guest.check(load, load_s * 3)
    guest.check("sleep 3")
    return records(guest, offset, name)


def watch_until_loaded(guest: Guest, load: str, name: str, seconds: int,
                       idle_s: int = 8) -> list[dict]:
    """`keel doctor --watch` over `idle_s` of idle line, then `load` (run in
    the background) until the watch has `seconds` seconds that carried a
    megabit or more through the tunnel, or LOAD_MOST_S have passed: a watch
    on a CPU-bound guest prints fewer seconds on a slower host (2 in 20 s
    in a CI run), so the load lasts by what it printed, not by the clock."""
    settle(guest)
    offset = clock_offset(guest)
    start_watch(guest, idle_s + LOAD_MOST_S + 4, name)
    guest.check(f"sleep {idle_s}")
    began = time.monotonic()
    guest.check(f"({load} > /dev/null 2>&1 &)")
    # counted in the guest (one number on the console: the whole file each
    # time kept the capped edge's CPU on its serial console, not the tunnel)
    count = (f"grep -cE '\"tunnel_mbit\": ([1-9]|[0-9]{{2,}})' /run/{name}.jsonl 2>/dev/null; true")
    while time.monotonic() - began < LOAD_MOST_S:
        time.sleep(5)
        if int(guest.check(count).strip() or 0) >= seconds:
            break
    guest.check("killall iperf3 2>/dev/null; pkill -f 'doctor --watch' ; true")
    return records(guest, offset, name)


def settle(guest: Guest) -> None:
    """The line let drain first: an earlier test's queue would be taken for
    the idle baseline (seen: 396 ms "idle" right after the CPU-bound case)."""
    guest.until(f"ping -n -q -c 5 -i 0.2 {topo.HUB_WAN} | "
                "awk -F/ '/^rtt/ {exit !($5 < 100)}'", 60)


def loaded(recs: list[dict]) -> list[dict]:
    """The seconds that carried a megabit or more through the tunnel."""
    return [r for r in recs if (r["signals"]["tunnel_mbit"] or 0) >= 1]


# the longest a load runs in watch_until_loaded, and how many loaded seconds
# it waits for (10-11 in 20 s here)
LOAD_MOST_S = 120
LOADED_SECONDS = 12


# the edge's QEMU held to this share of one host core in the CPU-bound case
# (tests/lab/cpucap.py), as a small VPS plan is sold. Set 10 nice steps
# behind the others instead (a weight, tests/lab/priority.py), it was named CPU-bound in
# 15 of 21 seconds twice here, and in 5 of 21 in CI: with the host to this
# lab alone, the others did not want enough for a weight to hold the edge.
# Capped at 0.5 its core was 89-100 % busy (the verdict's line is 90 %), 15 of
# 21 seconds named; at 0.4, 93-100 %, 13 of 17; at 0.35 its own watch printed
# only 11 seconds of the 20
EDGE_CORE_SHARE = 0.4


def test_a_cpu_bound_tunnel_is_named_cpu_bound_not_starvation(lab):
    """No bottleneck on the line: the edge's CPU is the limit, as on a small
    router in front of a bigger VPS. Which guest's CPU limits an emulated
    tunnel is otherwise a matter of the host: with edge, isp and hub busy at
    once on two host cores, the hub's vCPU (decryption, the receiver) ran out
    first on one host, and the edge saw its core only 55-83 % busy (named
    healthy, rightly). So the edge's QEMU is held to 0.4 of a core for the
    load, in 10 ms slices (far under the stall meter's bounds): by a cgroup,
    or on a host without one, by a duty cycle (tests/lab/cpucap.py)."""
    topo.clear_bottleneck(lab.isp)  # no bottleneck: the CPU is the limit
    try:
        with cpucap.capped(lab.edge.child.pid, EDGE_CORE_SHARE) as held_by:
            recs = watch_until_loaded(
                lab.edge, f"iperf3 -c {topo.HUB_TUNNEL} -P 4 -t {LOAD_MOST_S}", "cpu-bound",
                LOADED_SECONDS)
    finally:
        topo.set_bottleneck(lab.isp, topo.Bottleneck())
    causes = [r["causes"] for r in loaded(recs)]
    figures.record("cpu-bound tunnel: the edge", {"core_share": EDGE_CORE_SHARE},
                   held_by=held_by, causes=causes,
                   busy_max=[round(max(r["signals"]["busy"].values(), default=0), 2)
                             for r in loaded(recs)],
                   mbit=[round(r["signals"]["tunnel_mbit"]) for r in loaded(recs)])
    assert dominant(causes, "cpu_bound")


def test_the_bloated_line_without_cake_is_named_bloat(lab):
    recs = watch_during(lab.edge, 20, f"iperf3 -c {topo.HUB_TUNNEL} -P 4 -t 20 > /dev/null",
                        "bloat")
    causes = [r["causes"] for r in recs if (r["signals"]["tunnel_mbit"] or 0) >= 1]
    bloat = [v for r in recs for v in r["verdicts"] if v["cause"] == "bloat"]
    figures.record("bloated line without CAKE: the edge", {}, causes=causes,
                   text=bloat[-1]["text"] if bloat else None)
    assert bloat, causes
    assert "CAKE is off" in bloat[-1]["text"]
    assert dominant(causes, "bloat")
