"""Where must CAKE sit so that a ping through the WireGuard tunnel stays fast
while a bulk upload runs through the same tunnel?

    python -m bench.cake_placement [--seconds 12]

Lab: the bloated lab's guests (tests/lab/labs.py): edge -> isp (bloated FIFO,
12/4 Mbit/s) -> hub, a WireGuard tunnel edge
<-> hub, iperf3 -P 4 upload through the tunnel, ping through the tunnel and
to the hub's WAN address outside it. Scenarios, side by side in one run:
  none       no shaping on the edge
  wan        CAKE on the edge's WAN egress (sees one UDP flow: the tunnel)
  tunnel     CAKE on wg0 egress (sees the flows inside the tunnel)
Prints p50/p95 RTT and goodput per scenario; writes bench/results/cake_placement.json.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

from keel.parse import iperf3, ping
from keel.selftest.grading import latency_stats
from tests.lab import labs
from tests.lab import topology as topo
from tests.lab.guest import Guest
from tests.lab.lab import Lab

RESULTS = Path(__file__).resolve().parent / "results"


def run_load(edge: Guest, seconds: int) -> dict:
    edge.check("rm -f /run/p-in /run/p-out /run/up.json")
    edge.check(f"(ping -D -O -n -i 0.2 -c {seconds * 5} {topo.HUB_TUNNEL} > /run/p-in &); "
               f"(ping -D -O -n -i 0.2 -c {seconds * 5} {topo.HUB_WAN} > /run/p-out &); "
               "sleep 1")
    edge.check(f"iperf3 -c {topo.HUB_TUNNEL} -P 4 -t {seconds - 2} --json > /run/up.json",
               timeout=seconds * 3)
    edge.check("sleep 2")
    inside = ping.track(edge.check("cat /run/p-in"), 0.2)
    outside = ping.track(edge.check("cat /run/p-out"), 0.2)
    result = iperf3.parse_json(edge.check("cat /run/up.json"))
    skip = 10  # the first 2 s: before the load builds up
    s_in = latency_stats([s.rtt_ms for s in inside[skip:]])
    s_out = latency_stats([s.rtt_ms for s in outside[skip:]])
    return {"goodput_mbit": round(result.received_bps / 1e6, 2),
            "tunnel_p50_ms": round(s_in.p50_ms, 1), "tunnel_p95_ms": round(s_in.p95_ms, 1),
            "outside_p50_ms": round(s_out.p50_ms, 1), "outside_p95_ms": round(s_out.p95_ms, 1),
            "lost": s_in.lost}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=int, default=12)
    args = parser.parse_args()
    # the line of docs/cake.md's table (12/4 Mbit/s; only the 4 Mbit/s upload is
    # loaded here, which the lab's three guests carry without saturating)
    shape = topo.Bottleneck(down_kbit=12_000, up_kbit=4_000)
    rate = shape.up_kbit * 90 // 100
    results: dict[str, dict] = {}
    failed: dict[str, str] = {}
    with tempfile.TemporaryDirectory(prefix="keel-bench-") as tmp:
        lab = Lab(Path(tmp))
        try:
            rl = labs.router_lab(lab, labs.BLOATED.define(lab))  # (its lan guest idles)
            lab.start()
            edge, hub, isp = rl.edge, rl.hub, rl.isp
            assert isp is not None
            topo.setup_isp(isp, shape)
            wan = edge.ifname("up")
            topo.address_wan(rl)
            # waits for the first handshake (seconds, under emulation)
            topo.raw_tunnel(edge, hub)
            idle = ping.track(
                edge.check(f"ping -D -O -n -i 0.2 -c 15 {topo.HUB_TUNNEL}", 60), 0.2)
            results["idle"] = {"tunnel_p50_ms": round(
                latency_stats([s.rtt_ms for s in idle]).p50_ms, 1)}
            print(f"idle: {results['idle']}", flush=True)
            scenarios = {
                "none": [],
                "wan": [f"tc qdisc replace dev {wan} root cake bandwidth {rate}kbit "
                        "besteffort nat"],
                # inside the tunnel each packet carries WireGuard's 80 bytes
                # less: shape at rate * 1420/1500
                "tunnel": [f"tc qdisc replace dev wg0 root cake bandwidth "
                           f"{rate * 1420 // 1500}kbit besteffort overhead 80"],
            }
            for name, setup in scenarios.items():
                try:  # one scenario that fails is named; the others still run
                    edge.check(f"tc qdisc del dev {wan} root 2>/dev/null; "
                               "tc qdisc del dev wg0 root 2>/dev/null; true")
                    for cmd in setup:
                        edge.check(cmd)
                    results[name] = run_load(edge, args.seconds)
                    print(f"{name}: {results[name]}", flush=True)
                except Exception as err:  # said, and the bench goes on
                    failed[name] = " ".join(str(err).split())[:300]
                    print(f"{name}: FAILED: {failed[name]}", flush=True)
        finally:
            lab.close()
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "cake_placement.json").write_text(json.dumps(
        {"bottleneck": shape.__dict__, "cake_rate_kbit": rate, "results": results}, indent=1))
    print(f"{'where':8} {'goodput':>9} {'tunnel p50':>11} {'tunnel p95':>11} "
          f"{'outside p95':>12}")
    for name in ("none", "wan", "tunnel"):
        if name not in results:
            print(f"{name:8} failed: {failed.get(name, 'not reached')}")
            continue
        r = results[name]
        print(f"{name:8} {r['goodput_mbit']:>7} M {r['tunnel_p50_ms']:>8} ms "
              f"{r['tunnel_p95_ms']:>8} ms {r['outside_p95_ms']:>9} ms")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
