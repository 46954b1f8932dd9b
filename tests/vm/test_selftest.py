"""The self-tests against a bloated bottleneck in the lab: `lan` -> `edge` ->
`isp` (12/4 Mbit/s, 10 ms each way, 500 ms FIFO) -> `hub`, a WireGuard tunnel
edge <-> hub with iperf3 on the hub's tunnel address. One vCPU per guest: see
topology.build for why."""

from __future__ import annotations

import json

import pytest

from keel.parse import ping
from keel.selftest.grading import percentile
from tests.lab import topology as topo

SHAPE = topo.Bottleneck()
# p95 latency increase with CAKE at 90 %, under emulation. Both ways at once
# the edge (one emulated vCPU) carries 12 Mbit/s of WireGuard plus iperf3's 8
# streams, and the 2-core host runs 4 guests: over 10 runs the bidirectional
# p95 was 8.4-19.5 ms (p50 1.6-7.8 ms); pinning guests to host cores, or more
# vCPUs, did not lower it. So it is held to 30 ms, the others to 15 ms.
P95_LIMIT_MS = {"download": 15, "upload": 15, "bidirectional": 30}
SELFTEST_TIMEOUT = 75  # seconds at KVM speed: 5 s idle + 3 x 12 s load + margins


@pytest.fixture(scope="module")
def lab(make_module_lab):
    rl = topo.build(make_module_lab(), lan=True, isp=True, smp=1)
    rl.lab.start()
    assert rl.isp and rl.lan
    topo.setup_isp(rl.isp, SHAPE)
    topo.address_wan(rl)
    topo.raw_tunnel(rl.edge, rl.hub)
    edge_lan, client = rl.edge.ifname("lan"), rl.lan.ifname("lan")
    rl.edge.check(f"ip addr add {topo.LAN_EDGE}/24 dev {edge_lan} && ip link set {edge_lan} up")
    rl.edge.check("nft add table ip lab && nft 'add chain ip lab post { type nat hook "
                  "postrouting priority srcnat; }' && nft add rule ip lab post oifname wg0 "
                  "masquerade")
    topo.unconfigure(rl.lan)
    rl.lan.check(f"ip -4 addr flush dev {client}; ip addr add 192.168.77.2/24 dev {client} "
                 f"&& ip link set {client} up && ip route add default via {topo.LAN_EDGE}")
    rl.lan.check(f"ping -n -c 1 -w 20 {topo.HUB_TUNNEL}", 40)
    return rl


def selftest(rl, test: str, *args: str) -> dict | list:
    out = rl.edge.check(f"keel selftest {test} --json {' '.join(args)} 2>/run/selftest.err",
                        SELFTEST_TIMEOUT)
    return json.loads(out)


def independent_ping(rl):
    rl.lan.check(f"rm -f /run/p; (ping -D -O -n -i 0.2 {topo.HUB_TUNNEL} > /run/p &)")


def agrees(rl, phase: dict) -> None:
    """The LAN client's own ping through the tunnel, over the phase's window,
    agrees with the self-test's median (within 20 % or 5 ms)."""
    lan_rtts = independent_samples(rl, phase["window"])
    assert len(lan_rtts) >= 20
    theirs, ours = percentile(lan_rtts, 50), phase["tunnel"]["p50_ms"]
    assert abs(theirs - ours) <= max(0.2 * ours, 5.0), (phase["name"], theirs, ours)


def independent_samples(rl, window) -> list[float]:
    rl.lan.check("killall ping; true")
    samples = ping.final_samples(ping.parse_ping(rl.lan.check("cat /run/p")))
    start, end = window
    return [s.rtt_ms for s in samples if start <= s.timestamp < end and not s.lost]


def test_without_cake_the_bloated_fifo_grades_c_or_worse(lab):
    independent_ping(lab)
    (result,) = selftest(lab, "bufferbloat")
    assert result["grade"] in ("C", "D", "F"), result["grade"]
    assert result["increase_ms"] >= 100
    upload = next(p for p in result["phases"] if p["name"] == "upload")
    assert upload["increase_p50_ms"] >= 100
    agrees(lab, upload)


def test_cake_at_90_percent_grades_a_in_every_phase_and_keeps_the_throughput(lab):
    down_kbit, up_kbit = topo.cake_on_tunnel(lab.edge, SHAPE, 90)
    try:
        independent_ping(lab)
        (result,) = selftest(lab, "bufferbloat")
        phases = {p["name"]: p for p in result["phases"]}
        for name in ("download", "upload", "bidirectional"):
            p = phases[name]
            assert p["grade"] in ("A+", "A"), (name, p["grade"], p["increase_p50_ms"])
            assert p["increase_p95_ms"] < P95_LIMIT_MS[name], (name, p["increase_p95_ms"])
            assert p["tunnel"]["lost"] <= 1, (name, p["tunnel"])  # CAKE spares the probes
        # iperf3's goodput against CAKE's rate (which counts the tunnel's bytes too)
        assert phases["download"]["down_mbit"] * 1000 >= 0.85 * down_kbit
        assert phases["upload"]["up_mbit"] * 1000 >= 0.85 * up_kbit
        # under load both ways the download's ACKs share the upload: the sum
        both = phases["bidirectional"]["down_mbit"] + phases["bidirectional"]["up_mbit"]
        assert both * 1000 >= 0.80 * (down_kbit + up_kbit), phases["bidirectional"]
        agrees(lab, phases["download"])
    finally:
        topo.no_cake_on_tunnel(lab.edge)


def test_mtu_finds_a_lowered_link_mtu_exactly(lab):
    isp_core, hub_core = lab.isp.ifname("core"), lab.hub.ifname("core")
    lab.isp.check(f"ip link set {isp_core} mtu 1400")
    lab.hub.check(f"ip link set {hub_core} mtu 1400")
    try:
        result = selftest(lab, "mtu", "--wan", lab.edge.ifname("up"))
        assert result["wan_path_mtu"] == 1400
        assert result["recommended_tunnel_mtu"] == 1320
        assert result["tunnel_path_mtu"] <= 1420
    finally:
        lab.isp.check(f"ip link set {isp_core} mtu 1500")
        lab.hub.check(f"ip link set {hub_core} mtu 1500")
