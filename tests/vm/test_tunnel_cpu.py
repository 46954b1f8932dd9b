"""The tunnel's CPU cost, with no bottleneck: edge <-> hub directly, a
WireGuard tunnel, iperf3 on the hub. Under emulation the guests' CPU, not the
link, limits the tunnel; the throughput self-test must say so, and its CPU
cost per gigabit must agree with /proc/stat and the byte counters read here,
around the whole test, independently of keel.

One vCPU per guest: two guests' vCPUs then get a host core each, so what
saturates is the guest's own CPU (as on a small VPS), not the host."""

from __future__ import annotations

import json

import pytest

from tests.lab import topology as topo

# its verdicts measure the host's spare CPU: the quiet lane (tests/lab/lanes.py),
# and the host to itself: its guests saturate a host core each, and beside the
# main lane's pairing lab booting and the upgrade lab, with its guests first
# for the host, the test failed; last in the quiet lane, once the others have
# ended (its two guests keep both cores busy: no CPU left for lanes aside).
# Its lab is its own, started while the quiet lane waits.
pytestmark = [pytest.mark.lab("tunnel"), pytest.mark.host_alone(saturates=True)]
SELFTEST_TIMEOUT = 90  # seconds at KVM speed: 3 x 11 s of load + startup + margins


@pytest.fixture(scope="module")
def lab(shared_lab):
    return shared_lab


def test_the_tunnel_is_cpu_bound_and_its_cost_agrees_with_proc_stat(lab):
    hz = int(lab.edge.check("getconf CLK_TCK"))
    ticks_before, bytes_before = topo.kernel_ticks_and_wg_bytes(lab.edge)
    out = lab.edge.check("keel selftest throughput --json 2>/run/selftest.err", SELFTEST_TIMEOUT)
    ticks_after, bytes_after = topo.kernel_ticks_and_wg_bytes(lab.edge)
    result = json.loads(out)
    phases = {p["name"]: p for p in result["phases"]}

    assert result["cpu_bound"], phases
    assert phases["download"]["cpu_bound"], phases["download"]
    assert phases["download"]["down_mbit"] > 5, phases["download"]

    # keel's phases: cost and cost per gigabit -> its total gigabits
    keel_seconds = sum(p["tunnel_cpu_seconds"] for p in phases.values())
    keel_gbit = sum(p["tunnel_cpu_seconds"] / p["seconds_per_gigabit"] for p in phases.values())
    keel_cost = keel_seconds / keel_gbit
    ours = (ticks_after - ticks_before) / hz / ((bytes_after - bytes_before) * 8 / 1e9)
    print(f"tunnel CPU cost: keel {keel_cost:.2f}, /proc/stat {ours:.2f} CPU-s per Gbit")
    # keel counts softirq and WireGuard's crypt workers; /proc/stat's system
    # ticks also hold iperf3's and keel's own system calls around the whole
    # test, so ours is the larger, by more on a busier host: keel/ours was
    # 0.96 alone and 0.82 at the end of a full `make test` (once in 4 runs).
    assert 0.75 * ours <= keel_cost <= 1.05 * ours, (keel_cost, ours)

    # the recommendation is about 90 % of what it measured
    best_down = max(p["down_mbit"] for p in phases.values())
    assert result["recommend_down_kbit"] == pytest.approx(best_down * 900, rel=0.01)
