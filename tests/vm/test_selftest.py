"""The self-tests against a bloated bottleneck in the lab: `lan` -> `edge` ->
`isp` (topology.Bottleneck: a slow line with a 500 ms FIFO) -> `hub`, both
routers configured by keel, CAKE at 90 % on the edge's tunnel, iperf3 on the
hub's tunnel address. One vCPU per guest: tests/lab/labs.py says why.

Every latency verdict compares CAKE in place with CAKE bypassed, measured in
the same run (`keel selftest bufferbloat --compare`), never with a fixed
number of milliseconds: under emulation the lab's own CPU adds delay that
depends on the host (see topology.Bottleneck). The margins were checked with
one host core kept busy (tests/lab/busy.py; docs/lab.md). Absolute
figures are printed by `make bench`."""

from __future__ import annotations

import json

import pytest

from keel.parse import ping
from keel.selftest.grading import percentile
from keel.stall.summary import StallSecond
from keel.thresholds import GRADE_BANDS
from tests.lab import configs, figures
from tests.lab import topology as topo

# its verdicts measure the host's spare CPU: the quiet lane, its guests first (tests/lab/lanes.py)
pytestmark = [pytest.mark.lab("bloated"), pytest.mark.measures]

SHAPE = topo.Bottleneck()  # the isp's line, as the bloated lab sets it (tests/lab/labs.py)
CAKE_PERCENT = 90
LOADS = ("download", "upload", "bidirectional")
# CAKE in place against CAKE bypassed, per load phase, in the same run. The
# bypassed FIFO adds 300-500 ms (1-3 s on a starved host); CAKE must remove
# most of it. Worst seen over 6 runs with one host core kept busy by
# tests/lab/busy.py (in some, other tests running too):
#   +p50 ratio   download 0.08, upload 0.03, bidirectional 0.29
#   +p95 ratio   download 0.26, upload 0.10, bidirectional 0.62
#   overall grade 3 bands better; goodput ratio 0.68 (about 0.88 expected
#   from CAKE at 90 % and its overhead accounting; a rate set in the wrong
#   unit would give 0.125)
# Both ways at once the edge's one emulated vCPU carries the tunnel in both
# directions: on a starved host its CPU, not a queue, adds 60-135 ms at p50
# and 200-420 ms at p95, while the bypassed p95 is capped by the 500 ms FIFO.
# So the bidirectional +p50 is held to half the bypassed one and its tail is
# not held at all (make bench prints it).
MAX_P50_RATIO = {"download": 0.25, "upload": 0.25, "bidirectional": 0.5}
MAX_P95_RATIO = {"download": 0.5, "upload": 0.5}
MIN_OVERALL_GRADE_STEPS = 2  # and each phase's grade better than bypassed
MIN_GOODPUT_RATIO = 0.55
# The LAN client's ping crosses the edge's forwarding and a fourth guest too:
# on a starved host that path adds a median of its own (72.6 against the
# self-test's 60.3 ms seen with CAKE, one host core busy; 98.9 against 78.2
# on a slower CI machine). Against a bloated FIFO (+400 ms) 20 % or 5 ms tells
# a wrong measurement; with CAKE 25 ms (a path outside the tunnel, or through
# the FIFO, is off by 40 ms or more).
AGREE_BLOATED_MS = 5.0
AGREE_CAKE_MS = 25.0
COMPARE_TIMEOUT = 150  # seconds at KVM speed: 2 x (5 s idle + 3 x 12 s load) + margins
GRADES = [letter for _, letter in GRADE_BANDS] + ["F"]


@pytest.fixture(scope="module")
def lab(shared_lab):
    rl = shared_lab
    down, up = SHAPE.cake_rates(CAKE_PERCENT)
    configs.configure_with_keel(rl, download=down, upload=up, attach="tunnel")
    rl.lan.until(f"ping -n -c 1 -W 2 {topo.HUB_TUNNEL}", 60)  # DHCP lease, then the tunnel
    return rl


@pytest.fixture(scope="module")
def compared(lab) -> dict:
    """One `--compare` run: CAKE bypassed, then in place; the LAN client's own
    ping through the tunnel all along."""
    lab.lan.check(f"rm -f /run/p; (ping -D -O -n -i 0.2 {topo.HUB_TUNNEL} > /run/p &)")
    out = lab.edge.check("keel selftest bufferbloat --compare --json 2>/run/selftest.err",
                         COMPARE_TIMEOUT)
    lab.lan.check("killall ping; true")
    without, with_cake = json.loads(out)
    assert without["cake_bypassed"] and not with_cake["cake_bypassed"]
    figures.record("bufferbloat --compare", SHAPE.__dict__, without=without, with_cake=with_cake)
    lan = ping.track(lab.lan.check("cat /run/p"), 0.2)
    record_stalls(lab, with_cake)
    return {"without": without, "with": with_cake, "lan": lan}


def record_stalls(lab, result: dict) -> None:
    """How much of the spread of the latency with CAKE is the guests being
    descheduled by the host: the edge's and hub's stall meters over each load
    phase of the run with CAKE (figures only; the issue of the starving VPS)."""
    found = {}
    for guest in (lab.edge, lab.hub):
        seconds = [StallSecond.from_dict(json.loads(line)) for line in
                   guest.check("tail -n 400 /run/keel/stall.jsonl", 60).splitlines()]
        for phase in result["phases"]:
            start, end = phase["window"]
            inside = [s for s in seconds if start <= s.t < end]
            if inside:
                found[f"{guest.name} {phase['name']}"] = {
                    "stall_max_ms": round(max(s.max_ms for s in inside), 1),
                    "stall_p99_ms_median": round(percentile([s.p99_ms for s in inside], 50), 1),
                    "stalled_ms_per_s": round(sum(s.stalled_ms for s in inside) / len(inside), 1),
                    "increase_p50_ms": phase.get("increase_p50_ms")}
    figures.record("bufferbloat with CAKE: the guests' stall meters", SHAPE.__dict__, **found)


def phases(result: dict) -> dict[str, dict]:
    return {p["name"]: p for p in result["phases"]}


def agrees(lan: list, phase: dict, floor_ms: float) -> None:
    """The LAN client's own ping through the tunnel, over the phase's window,
    agrees with the self-test's median: within 20 %, or `floor_ms`."""
    start, end = phase["window"]
    theirs = [s.rtt_ms for s in lan if start <= s.sent < end and s.rtt_ms is not None]
    assert len(theirs) >= 20, (phase["name"], len(theirs))
    lan_p50, ours = percentile(theirs, 50), phase["tunnel"]["p50_ms"]
    assert abs(lan_p50 - ours) <= max(0.2 * ours, floor_ms), (phase["name"], lan_p50, ours)


def test_cake_is_in_place_with_the_rates_asked_for(lab):
    down, up = SHAPE.cake_rates(CAKE_PERCENT)
    (egress,) = lab.edge.json("tc -j qdisc show dev wg0 root")
    (ingress,) = lab.edge.json("tc -j qdisc show dev ifb4wg0 root")
    assert egress["kind"] == ingress["kind"] == "cake"
    assert egress["options"]["bandwidth"] == up * 125  # bytes/s
    assert ingress["options"]["bandwidth"] == down * 125


def test_without_cake_the_bloated_fifo_grades_c_or_worse(compared):
    without = compared["without"]
    assert without["grade"] in ("C", "D", "F"), without["grade"]
    for name, p in phases(without).items():
        if name in LOADS:
            assert p["increase_p50_ms"] >= 100, (name, p["increase_p50_ms"])
    agrees(compared["lan"], phases(without)["upload"], AGREE_BLOATED_MS)


def steps(without: dict, with_cake: dict) -> int:
    """How many grade bands better with CAKE."""
    return GRADES.index(without["grade"]) - GRADES.index(with_cake["grade"])


def test_cake_removes_most_of_the_bloat_in_every_phase(compared):
    overall = steps(compared["without"], compared["with"])
    assert overall >= MIN_OVERALL_GRADE_STEPS, (compared["without"]["grade"],
                                                compared["with"]["grade"])
    without, with_cake = phases(compared["without"]), phases(compared["with"])
    for name in LOADS:
        w, c = without[name], with_cake[name]
        assert c["increase_p50_ms"] <= MAX_P50_RATIO[name] * w["increase_p50_ms"], (
            name, c["increase_p50_ms"], w["increase_p50_ms"])
        if name in MAX_P95_RATIO:
            assert c["increase_p95_ms"] <= MAX_P95_RATIO[name] * w["increase_p95_ms"], (
                name, c["increase_p95_ms"], w["increase_p95_ms"])
        assert steps(w, c) >= 1, (name, w["grade"], c["grade"])
    agrees(compared["lan"], with_cake["download"], AGREE_CAKE_MS)


def test_cake_keeps_the_throughput(compared):
    without, with_cake = phases(compared["without"]), phases(compared["with"])
    for name, key in (("download", "down_mbit"), ("upload", "up_mbit")):
        assert with_cake[name][key] >= MIN_GOODPUT_RATIO * without[name][key], (
            name, with_cake[name][key], without[name][key])
    # both ways at once the download's ACKs share the upload: the sum
    both = [p["bidirectional"]["down_mbit"] + p["bidirectional"]["up_mbit"]
            for p in (without, with_cake)]
    assert both[1] >= MIN_GOODPUT_RATIO * both[0], both


def test_mtu_finds_a_lowered_link_mtu_exactly(lab):
    isp_core, hub_core = lab.isp.ifname("core"), lab.hub.ifname("core")
    lab.isp.check(f"ip link set {isp_core} mtu 1400")
    lab.hub.check(f"ip link set {hub_core} mtu 1400")
    try:
        result = lab.edge.json(f"keel selftest mtu --json --wan {lab.edge.ifname('up')} "
                               "2>/run/selftest.err", 75)
        assert result["wan_path_mtu"] == 1400
        assert result["recommended_tunnel_mtu"] == 1320
        assert result["tunnel_path_mtu"] <= 1420
    finally:
        lab.isp.check(f"ip link set {isp_core} mtu 1500")
        lab.hub.check(f"ip link set {hub_core} mtu 1500")
