"""CAKE's ack-filter on an asymmetric line, both ways loaded at once.

    python -m bench.ack_filter [--repeat 3] [--seconds 20]

Lab: lan -> edge -> isp (4/1.5 Mbit/s, 500 ms FIFO) -> hub, CAKE at 90 % on
the edge's tunnel (keel's config), iperf3 --bidir through it and a ping every
0.2 s. The upload's CAKE runs without and with ack-filter (`tc qdisc change`
on wg0), alternating, `--repeat` times each, in one lab: the download's ACKs
share the narrow uplink with the upload's data, and ack-filter drops ACKs
that a later one makes redundant. Prints goodput each way (share of CAKE's
rate) and +p50/+p95 over idle, median and range. Writes
bench/results/ack_filter.json."""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
from pathlib import Path

from tests.lab import autorate, configs, labs
from tests.lab.lab import Lab

RESULTS = Path(__file__).resolve().parent / "results"


def spread(values: list[float], fmt: str = "{:.0f}") -> str:
    mid = statistics.median(values)
    return f"{fmt.format(mid)} ({fmt.format(min(values))}-{fmt.format(max(values))})"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--seconds", type=int, default=20)
    args = parser.parse_args()
    line = autorate.SCHEDULE[0]
    steady = (autorate.Phase(args.seconds, line.down_kbit, line.up_kbit),)
    fixed = autorate.Scenario("fixed", line.down_kbit * 9 // 10, line.up_kbit * 9 // 10)
    got: dict[str, list[dict]] = {"no-ack-filter": [], "ack-filter": []}
    with tempfile.TemporaryDirectory(prefix="keel-bench-") as tmp:
        made: list[Lab] = []

        def make() -> Lab:
            made.append(Lab(Path(tmp) / f"lab{len(made)}"))
            return made[-1]

        try:
            rl = labs.BLOATED.build(make)
            hub_pub = configs.configure_with_keel(rl, download=fixed.down_kbit,
                                                  upload=fixed.up_kbit, attach="tunnel")
            autorate.configure(rl, hub_pub, fixed)
            for n in range(args.repeat):
                for mode in got:
                    print(f"bench: {mode}, run {n + 1} of {args.repeat} ...", flush=True)
                    rl.edge.check(f"tc qdisc change dev wg0 root cake {mode}")
                    run = autorate.run(rl, fixed, steady)
                    got[mode].append(run.phases[0])
        finally:
            for lab in made:
                lab.close()
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "ack_filter.json").write_text(json.dumps(
        {"line": line.__dict__, "cake": fixed.__dict__, "runs": got}, indent=1))
    print(f"\nline {line.down_kbit}/{line.up_kbit} kbit/s, CAKE {fixed.down_kbit}/"
          f"{fixed.up_kbit} on wg0, iperf3 --bidir {args.seconds} s; "
          f"median (range) of {args.repeat}")
    print(f"{'upload CAKE':14} {'down % of CAKE':>16} {'up % of CAKE':>16} "
          f"{'+p50 ms':>14} {'+p95 ms':>14}")
    for mode, phases in got.items():
        down = [100 * p["down_kbit"] / fixed.down_kbit for p in phases]
        up = [100 * p["up_kbit"] / fixed.up_kbit for p in phases]
        print(f"{mode:14} {spread(down):>16} {spread(up):>16} "
              f"{spread([p['p50'] for p in phases], '{:.1f}'):>14} "
              f"{spread([p['p95'] for p in phases], '{:.1f}'):>14}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
