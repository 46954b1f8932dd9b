"""make bench: the lab scenarios side by side in one run, as a table.

    python -m bench.run [--seconds 10]

1. lan -> edge -> isp (topology.Bottleneck(): 4/1.5 Mbit/s, 10 ms each way,
   500 ms FIFO) -> hub, configured by keel with CAKE at 90 % of the bottleneck
   on the tunnel (as measured best by bench.cake_placement): `keel selftest
   bufferbloat --compare`, CAKE bypassed then in place, --runs times in the
   same lab: latency increase per phase (median and range over the runs),
   their ratio, goodput as a share of the CAKE rate.
2. edge -> hub with no bottleneck: `keel selftest throughput`: Mbit/s, whether
   the tunnel is CPU-bound, the tunnel's CPU-seconds per gigabit, and the same
   cost from /proc/stat deltas taken around the test independently.
One vCPU per guest (tests/lab/labs.py says why).
Writes bench/results/bench.md and bench.json. Prints figures; never fails on speed.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
from pathlib import Path

from tests.lab import configs, labs
from tests.lab import topology as topo
from tests.lab.lab import Lab

RESULTS = Path(__file__).resolve().parent / "results"


def scenario_bottleneck(seconds: int, runs: int) -> dict:
    """keel configures edge and hub (CAKE at 90 %, on the tunnel); then
    `keel selftest bufferbloat --compare` `runs` times (CAKE bypassed, then in
    place), and once more for its human output."""
    shape = topo.Bottleneck()
    down, up = shape.cake_rates(90)
    timeout = 60 + 8 * seconds
    compares = []
    with tempfile.TemporaryDirectory(prefix="keel-bench-") as tmp:
        lab = Lab(Path(tmp))
        try:
            rl = labs.router_lab(lab, labs.BLOATED.define(lab))
            lab.start()
            assert rl.isp is not None
            topo.setup_isp(rl.isp, shape)
            configs.configure_with_keel(rl, download=down, upload=up, attach="tunnel")
            cake_line = rl.edge.check("tc qdisc show dev wg0 root")
            for n in range(1, runs + 1):
                print(f"bench: keel selftest bufferbloat --compare, run {n} of {runs} ...",
                      flush=True)
                without, with_cake = json.loads(rl.edge.check(
                    f"keel selftest bufferbloat --compare --json --seconds {seconds} "
                    "2>/run/selftest.err || { tail -3 /run/selftest.err >&2; false; }",
                    timeout))
                compares.append({"without": without, "with": with_cake})
            print("bench: keel selftest bufferbloat --compare (human output) ...", flush=True)
            text = rl.edge.check(f"keel selftest bufferbloat --compare --seconds {seconds} "
                                 "2>/run/selftest.err || { tail -3 /run/selftest.err; "
                                 "false; }", timeout)
            print(text, flush=True)
        finally:
            lab.close()
    return {"bottleneck": shape.__dict__, "cake_down_kbit": down, "cake_up_kbit": up,
            "cake": cake_line, "runs": compares, "compare_text": text}


def spread(values: list[float], fmt: str = ".1f") -> str:
    """median (min-max) of one figure over the runs."""
    ordered = sorted(values)
    mid = statistics.median(ordered)
    if len(ordered) == 1:
        return format(mid, fmt)
    return f"{mid:{fmt}} ({ordered[0]:{fmt}}-{ordered[-1]:{fmt}})"


def scenario_cpu(seconds: int) -> dict:
    with tempfile.TemporaryDirectory(prefix="keel-bench-") as tmp:
        lab = Lab(Path(tmp))
        try:
            rl = labs.router_lab(lab, labs.TUNNEL.define(lab))
            lab.start()
            topo.address_wan(rl)
            topo.raw_tunnel(rl.edge, rl.hub)
            hz = int(rl.edge.check("getconf CLK_TCK"))
            ticks0, bytes0 = topo.kernel_ticks_and_wg_bytes(rl.edge)
            out = rl.edge.check(f"keel selftest throughput --json --seconds {seconds} "
                                "2>/dev/null", 60 + 8 * seconds)
            ticks1, bytes1 = topo.kernel_ticks_and_wg_bytes(rl.edge)
        finally:
            lab.close()
    result = json.loads(out)
    independent = (ticks1 - ticks0) / hz / ((bytes1 - bytes0) * 8 / 1e9)
    return {"throughput": result, "independent_seconds_per_gigabit": round(independent, 2)}


def table(b: dict, c: dict) -> str:
    runs = b["runs"]
    lines = ["## Latency under load: no shaping vs CAKE at 90 % (through the tunnel)", "",
             f"Bottleneck {b['bottleneck']['down_kbit']}/{b['bottleneck']['up_kbit']} kbit/s, "
             f"{b['bottleneck']['delay_ms']} ms each way, {b['bottleneck']['buffer_ms']} ms FIFO; "
             f"CAKE {b['cake_down_kbit']}/{b['cake_up_kbit']} kbit/s, configured by keel: "
             f"`{b['cake']}` (+ ingress on ifb4wg0). Measured by `keel selftest bufferbloat "
             f"--compare` (bypassed, then in place), {len(runs)} runs in one lab: median "
             "(min-max).", "",
             "| phase | +p50 no CAKE (ms) | +p50 CAKE (ms) | ratio | +p95 no CAKE (ms) "
             "| +p95 CAKE (ms) | grades no CAKE / CAKE | goodput / CAKE rate |",
             "|---|---|---|---|---|---|---|---|"]
    for name in ("download", "upload", "bidirectional"):
        w = [{p["name"]: p for p in r["without"]["phases"]}[name] for r in runs]
        q = [{p["name"]: p for p in r["with"]["phases"]}[name] for r in runs]
        ratio = [a["increase_p50_ms"] / max(z["increase_p50_ms"], 0.1)
                 for a, z in zip(w, q, strict=True)]
        shares = []
        if q[0]["down_mbit"]:
            shares.append("down " + spread([100 * z["down_mbit"] * 1000 / b["cake_down_kbit"]
                                            for z in q], ".0f") + " %")
        if q[0]["up_mbit"]:
            shares.append("up " + spread([100 * z["up_mbit"] * 1000 / b["cake_up_kbit"]
                                          for z in q], ".0f") + " %")
        lines.append(
            f"| {name} | {spread([a['increase_p50_ms'] for a in w])} "
            f"| {spread([z['increase_p50_ms'] for z in q])} | {spread(ratio, '.0f')}x "
            f"| {spread([a['increase_p95_ms'] for a in w])} "
            f"| {spread([z['increase_p95_ms'] for z in q])} "
            f"| {' '.join(a['grade'] + '/' + z['grade'] for a, z in zip(w, q, strict=True))} "
            f"| {', '.join(shares)} |")
    lines += ["", "Overall grades: " + ", ".join(
                  f"{r['without']['grade']} -> {r['with']['grade']}" for r in runs)
              + "; RPM " + ", ".join(f"{r['without']['rpm']:.0f} -> {r['with']['rpm']:.0f}"
                                     for r in runs) + ".", "",
              "## Tunnel CPU cost, no bottleneck", "",
              "| phase | Mbit/s | CPU-s per Gbit | cores busy | CPU-bound |",
              "|---|---|---|---|---|"]
    for p in c["throughput"]["phases"]:
        mbit = p["down_mbit"] + p["up_mbit"]
        busy = " ".join(f"{k} {v:.0%}" for k, v in p["core_busy"].items())
        lines.append(f"| {p['name']} | {mbit:.1f} | {p['seconds_per_gigabit']} | {busy} | "
                     f"{p['cpu_bound']} |")
    t = c["throughput"]["phases"]
    total = sum(p["tunnel_cpu_seconds"] for p in t) / sum(
        p["tunnel_cpu_seconds"] / p["seconds_per_gigabit"] for p in t)
    lines += ["", f"Whole test: keel {total:.2f} CPU-s per Gbit; softirq + system from "
                  f"/proc/stat and wg0's byte counters read around it independently: "
                  f"{c['independent_seconds_per_gigabit']:.2f}.", "",
              "## `keel selftest bufferbloat --compare` (human output, same lab)", "",
              "```", b["compare_text"], "```"]
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=int, default=10)
    parser.add_argument("--runs", type=int, default=3,
                        help="bufferbloat --compare runs, for the spread (default 3)")
    args = parser.parse_args()
    print("bench: bufferbloat with and without CAKE (4 guests) ...", flush=True)
    b = scenario_bottleneck(args.seconds, args.runs)
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
