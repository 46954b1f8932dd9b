"""make bench: the lab scenarios side by side in one run, as a table.

    python -m bench.run [--seconds 10]

1. edge -> isp (Bottleneck(): 12/4 Mbit/s, 10 ms each way, 500 ms FIFO) -> hub,
   a WireGuard tunnel: `keel selftest bufferbloat` with no shaping, then with
   CAKE at 90 % of the bottleneck (attached to the tunnel, as measured best by
   bench.cake_placement): latency increase per phase, their ratio, goodput as
   a share of the CAKE rate.
2. edge -> hub with no bottleneck: `keel selftest throughput`: Mbit/s, whether
   the tunnel is CPU-bound, the tunnel's CPU-seconds per gigabit, and the same
   cost from /proc/stat deltas taken around the test independently.
Writes bench/results/bench.md and bench.json. Prints figures; never fails on speed.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

from keel.parse import procstat
from keel.render import cake
from keel.render.model import Shaping, Wan
from tests.lab import topology as topo
from tests.lab.lab import Lab

RESULTS = Path(__file__).resolve().parent / "results"


def bufferbloat(edge, seconds: int) -> dict:
    out = edge.check(f"keel selftest bufferbloat --json --seconds {seconds} 2>/dev/null",
                     30 + 4 * seconds)
    return json.loads(out)[0]


def scenario_bottleneck(seconds: int) -> dict:
    shape = topo.Bottleneck()
    down, up = shape.down_kbit * 90 // 100, shape.up_kbit * 90 // 100
    with tempfile.TemporaryDirectory(prefix="keel-bench-") as tmp:
        lab = Lab(Path(tmp))
        try:
            rl = topo.build(lab, isp=True)
            lab.start()
            assert rl.isp is not None
            topo.setup_isp(rl.isp, shape)
            topo.address_wan(rl)
            topo.raw_tunnel(rl.edge, rl.hub)
            without = bufferbloat(rl.edge, seconds)
            wan = Wan(rl.edge.ifname("up"), shaping=Shaping(download_kbit=down, upload_kbit=up,
                                                            attach="tunnel"))
            for cmd in cake.egress_commands(wan, "wg0") + cake.ingress_commands(wan, "wg0"):
                rl.edge.check(" ".join(cmd))
            rl.edge.check("ethtool -K wg0 gro off")
            with_cake = bufferbloat(rl.edge, seconds)
        finally:
            lab.close()
    return {"bottleneck": shape.__dict__, "cake_down_kbit": down, "cake_up_kbit": up,
            "without": without, "with": with_cake}


def scenario_cpu(seconds: int) -> dict:
    with tempfile.TemporaryDirectory(prefix="keel-bench-") as tmp:
        lab = Lab(Path(tmp))
        try:
            rl = topo.build(lab)
            lab.start()
            topo.address_wan(rl)
            topo.raw_tunnel(rl.edge, rl.hub)
            before = procstat.parse_proc_stat(rl.edge.check("cat /proc/stat"))
            out = rl.edge.check(f"keel selftest throughput --json --seconds {seconds} "
                                "2>/dev/null", 60 + 8 * seconds)
            after = procstat.parse_proc_stat(rl.edge.check("cat /proc/stat"))
        finally:
            lab.close()
    result = json.loads(out)
    share = procstat.shares(before, after)
    return {"throughput": result,
            "independent_busy": {c: round(s.busy, 3) for c, s in share.items()}}


def table(b: dict, c: dict) -> str:
    lines = ["## Latency under load: no shaping vs CAKE at 90 % (through the tunnel)", "",
             f"Bottleneck {b['bottleneck']['down_kbit']}/{b['bottleneck']['up_kbit']} kbit/s, "
             f"{b['bottleneck']['buffer_ms']} ms FIFO; CAKE {b['cake_down_kbit']}/"
             f"{b['cake_up_kbit']} kbit/s.", "",
             "| phase | +p50 no CAKE (ms) | +p50 CAKE (ms) | ratio | +p95 CAKE (ms) | grade "
             "no CAKE / CAKE | goodput / CAKE rate |",
             "|---|---|---|---|---|---|---|"]
    w = {p["name"]: p for p in b["with"]["phases"]}
    for p in b["without"]["phases"]:
        if p["name"] == "idle":
            continue
        q = w[p["name"]]
        ratio = p["increase_p50_ms"] / max(q["increase_p50_ms"], 0.1)
        shares = []
        if q["down_mbit"]:
            shares.append(f"down {q['down_mbit'] * 1000 / b['cake_down_kbit']:.0%}")
        if q["up_mbit"]:
            shares.append(f"up {q['up_mbit'] * 1000 / b['cake_up_kbit']:.0%}")
        lines.append(f"| {p['name']} | {p['increase_p50_ms']:.1f} | {q['increase_p50_ms']:.1f} "
                     f"| {ratio:.0f}x | {q['increase_p95_ms']:.1f} | {p['grade']} / {q['grade']} "
                     f"| {', '.join(shares)} |")
    lines += ["", f"Overall: grade {b['without']['grade']} -> {b['with']['grade']}, "
                  f"RPM {b['without']['rpm']:.0f} -> {b['with']['rpm']:.0f}.", "",
              "## Tunnel CPU cost, no bottleneck", "",
              "| phase | Mbit/s | CPU-s per Gbit | cores busy | CPU-bound |",
              "|---|---|---|---|---|"]
    for p in c["throughput"]["phases"]:
        mbit = p["down_mbit"] + p["up_mbit"]
        busy = " ".join(f"{k} {v:.0%}" for k, v in p["core_busy"].items())
        lines.append(f"| {p['name']} | {mbit:.1f} | {p['seconds_per_gigabit']} | {busy} | "
                     f"{p['cpu_bound']} |")
    busy = " ".join(f"{k} {v:.0%}" for k, v in c["independent_busy"].items())
    lines += ["", f"Independent /proc/stat over the whole test: {busy}."]
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=int, default=10)
    args = parser.parse_args()
    print("bench: bufferbloat with and without CAKE (4 guests) ...", flush=True)
    b = scenario_bottleneck(args.seconds)
    print("bench: tunnel throughput and CPU cost (2 guests) ...", flush=True)
    c = scenario_cpu(args.seconds)
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "bench.json").write_text(json.dumps({"bufferbloat": b, "cpu": c}, indent=1))
    md = table(b, c)
    (RESULTS / "bench.md").write_text(md)
    print(md)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
