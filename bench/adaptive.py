"""Adaptive CAKE against fixed rates on a line whose capacity changes.

    python -m bench.adaptive [--repeat 2]

Lab: lan -> edge -> isp (bloated 500 ms FIFO; its rates change on the
schedule of tests/lab/autorate.py) -> hub, CAKE on the edge's tunnel, iperf3
--bidir through it and a ping every 0.2 s. The three scenarios (fixed at the
first phase's rates, fixed at the lowest, adaptive) run side by side in one
lab, `--repeat` times; per phase it prints +p50/+p95 over idle (median and
range over the repeats) and the goodput each way against the line's rate.
Writes bench/results/adaptive.json."""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
from pathlib import Path

from tests.lab import autorate, configs, labs
from tests.lab.lab import Lab

RESULTS = Path(__file__).resolve().parent / "results"


def spread(values: list[float]) -> str:
    if not values:
        return "-"
    mid = statistics.median(values)
    if len(values) == 1:
        return f"{mid:.0f}"
    return f"{mid:.0f} ({min(values):.0f}-{max(values):.0f})"


def native_cost(seconds: float = 10.0) -> float:
    """The daemon and a reflector on this host's loopback, in this process, at
    ADAPT_PROBE_HZ (never resting): their CPU together, in shares of a core.
    What a real (not emulated) CPU pays; CAKE is not changed (the host has no
    sch_cake, and the rate never moves on an idle loopback)."""
    import socket
    import threading
    import time

    from keel.adaptive import daemon, reflector
    from keel.adaptive.controller import Bounds
    from keel.thresholds import ADAPT_PROBE_HZ

    class Still:
        def set(self, dev: str, kbit: int) -> None:
            pass

    port = 45899
    stop = threading.Event()
    refl = reflector.Reflector(lambda: 0.0, port=port,
                               find=lambda: {"lo": socket.if_nametoindex("lo")})
    threading.Thread(target=refl.run, args=(stop,), daemon=True).start()
    with tempfile.TemporaryDirectory(prefix="keel-bench-") as tmp:
        plan = daemon.Plan("127.0.0.1", "lo", "lo", Bounds(600, 1350, 1500),
                           Bounds(1500, 3600, 4000))
        d = daemon.Daemon(plan, Path(tmp), cake=Still(), port=port)
        d.period = lambda: 1.0 / ADAPT_PROBE_HZ  # type: ignore[method-assign]
        timer = threading.Timer(seconds, stop.set)
        began = time.process_time()
        timer.start()
        d.run(stop)
        spent = time.process_time() - began
    return spent / seconds


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()
    runs: dict[str, list[autorate.Run]] = {}
    failed: dict[str, str] = {}
    with tempfile.TemporaryDirectory(prefix="keel-bench-") as tmp:
        made: list[Lab] = []

        def make() -> Lab:
            made.append(Lab(Path(tmp) / f"lab{len(made)}"))
            return made[-1]

        try:
            rl = labs.BLOATED.build(make)
            first = autorate.SCHEDULE[0]
            hub_pub = configs.configure_with_keel(rl, download=first.down_kbit * 9 // 10,
                                                  upload=first.up_kbit * 9 // 10,
                                                  attach="tunnel")
            try:
                spent = autorate.cost(rl, hub_pub)
                print(f"bench: cost in the lab (emulated CPUs), goal <= 0.50 % of a core each:\n"
                      f"  tunnel idle (resting):  edge daemon {spent['edge_idle']:.2%}, "
                      f"hub reflector {spent['reflector_idle']:.2%}\n"
                      f"  loaded both ways:       edge daemon {spent['edge_loaded']:.2%}, "
                      f"hub reflector {spent['reflector_loaded']:.2%}\n"
                      f"  (hub stall meter: {spent['hub_meter_idle']:.2%} idle, "
                      f"{spent['hub_meter_loaded']:.2%} loaded, "
                      f"{spent['hub_meter_not']:.2%} with the probes dropped)\n"
                      f"  under load the same piece of keel's Python took "
                      f"{spent['emulation_factor']:.0f}x the CPU on the edge that it takes "
                      f"on this host: loaded, on a real CPU, about edge daemon "
                      f"{spent['edge_loaded'] / spent['emulation_factor']:.2%}, hub reflector "
                      f"{spent['reflector_loaded'] / spent['emulation_factor']:.2%}",
                      flush=True)
                native = native_cost()
                print(f"bench: cost on this host's own CPU (daemon + reflector in one "
                      f"process, loopback, probing at full rate): {native:.2%} of a core",
                      flush=True)
            except Exception as err:  # said, and the bench goes on
                failed["cost"] = " ".join(str(err).split())[:300]
                print(f"cost: FAILED: {failed['cost']}", flush=True)
            for n in range(args.repeat):
                for scenario in autorate.scenarios():
                    print(f"bench: {scenario.name}, run {n + 1} of {args.repeat} ...",
                          flush=True)
                    try:  # a scenario that fails is named; the others still run
                        autorate.configure(rl, hub_pub, scenario)
                        runs.setdefault(scenario.name, []).append(autorate.run(rl, scenario))
                    except Exception as err:  # said, and the bench goes on
                        failed[scenario.name] = " ".join(str(err).split())[:300]
                        print(f"{scenario.name}: FAILED: {failed[scenario.name]}", flush=True)
        finally:
            for lab in made:
                lab.close()
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "adaptive.json").write_text(json.dumps(
        {"schedule": [p.__dict__ for p in autorate.SCHEDULE],
         "runs": {k: [r.phases for r in v] for k, v in runs.items()}}, indent=1))
    print(f"\nline: {' -> '.join(f'{p.down_kbit}/{p.up_kbit}' for p in autorate.SCHEDULE)} "
          f"kbit/s down/up, {autorate.SCHEDULE[0].seconds} s each, 500 ms FIFO; "
          f"median (range) of {args.repeat} runs")
    print(f"{'scenario':16} {'phase':>5} {'+p50 ms':>14} {'+p95 ms':>14} "
          f"{'down kbit/s':>16} {'up kbit/s':>14}")
    for name, got in runs.items():
        for i, phase in enumerate(autorate.SCHEDULE):
            per = [r.phases[i] for r in got]
            print(f"{name:16} {i + 1:>5} {spread([p['p50'] for p in per]):>14} "
                  f"{spread([p['p95'] for p in per]):>14} "
                  f"{spread([p['down_kbit'] for p in per]):>10}/{phase.down_kbit:<5} "
                  f"{spread([p['up_kbit'] for p in per]):>8}/{phase.up_kbit:<5}")
    down, up = autorate.offered()
    for name, got in runs.items():
        share = [(r.total("down_kbit") + r.total("up_kbit")) / (down + up) for r in got]
        print(f"{name:16} goodput {spread([s * 100 for s in share])} % of the line's rate; "
              f"under load +p50 {spread([r.p50 for r in got])} "
              f"+p95 {spread([r.p95 for r in got])} ms")
    for name, why in failed.items():
        print(f"{name}: failed: {why}")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
