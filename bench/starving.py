"""make bench: the starving VPS, side by side in one run.

    python -m bench.starving [--seconds 20]

lan -> edge -> isp -> hub, configured by keel (no CAKE); the LAN client pings
the hub through the tunnel at 5 Hz while the hub runs `keel doctor --watch`.
The same lab, throttle off, then on (the hub's QEMU process stopped 150 ms of
every 250 ms, tests/lab/throttle.py, as a burstable VPS's host does), then off
again. Per phase: the ping through the tunnel (p50/p95), the hub's load
average, its stall meter (p99/max), steal, keel's verdict and how long it took
to appear; and the stall meter's own cost, as a share of a core, on the hub
and on this host. Writes bench/results/starving.md. Never fails on speed."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from keel.parse import ping
from keel.selftest.grading import percentile
from tests.lab import configs, labs
from tests.lab import topology as topo
from tests.lab.lab import Lab
from tests.lab.screen import run_ui
from tests.lab.throttle import throttled
from tests.lab.watch import between, clock_offset, records, start_watch

RESULTS = Path(__file__).resolve().parent / "results"
TOP = Path(__file__).resolve().parents[1]


def meter_ticks(guest) -> tuple[int, float]:
    """(utime + stime of the guest's stall meter, the guest's uptime in s)."""
    out = guest.check("pid=$(cat /run/keel/stall-meter.pid); "
                      "cut -d' ' -f14,15 /proc/$pid/stat; cut -d' ' -f1 /proc/uptime")
    ticks, uptime = out.splitlines()
    return sum(map(int, ticks.split())), float(uptime)


def _cpu_ticks(pid: int) -> int:
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(") ")[2].split()
    return int(fields[11]) + int(fields[12])


def host_meter_cost(seconds: int, settle_s: float = 5.0) -> float:
    """The stall meter's CPU as a share of one host core, here, in its steady
    state (Python's start and imports left out: the first `settle_s`)."""
    hz = os.sysconf("SC_CLK_TCK")
    with tempfile.TemporaryDirectory() as tmp:
        proc = subprocess.Popen([sys.executable, "-m", "keel.cli", "stall-meter", "--out",
                                 f"{tmp}/stall.jsonl"], cwd=TOP / "tui",
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            time.sleep(settle_s)
            before, t0 = _cpu_ticks(proc.pid), time.monotonic()
            time.sleep(seconds)
            used, wall = (_cpu_ticks(proc.pid) - before) / hz, time.monotonic() - t0
        finally:
            proc.terminate()
            proc.wait(timeout=10)
    return used / wall


def phase_row(name: str, lan, hub_recs, start: float, end: float, on: float | None) -> dict:
    rtts = [rtt for sent, rtt in lan if start <= sent < end and rtt is not None]
    recs = between(hub_recs, start, end)
    sig = [r["signals"] for r in recs]
    worst = Counter(r["causes"][0] for r in recs[-10:]).most_common(1)
    starved = [r for r in recs if "starved" in r["causes"]]
    return {
        "phase": name,
        "ping_p50_ms": round(percentile(rtts, 50), 1) if rtts else None,
        "ping_p95_ms": round(percentile(rtts, 95), 1) if rtts else None,
        "hub_load": max((s["load_average"] for s in sig if s["load_average"] is not None),
                        default=None),
        "stall_p99_ms": max((s["stall_p99_ms"] for s in sig if s["stall_p99_ms"] is not None),
                            default=None),
        "stall_max_ms": max((s["stall_max_ms"] for s in sig if s["stall_max_ms"] is not None),
                            default=None),
        "steal_pct": max((round(s["steal"] * 100, 1) for s in sig if s["steal"] is not None),
                         default=None),
        "verdict": worst[0][0] if worst else None,
        "seconds_to_verdict": (round(starved[0]["host_t"] - on, 1)
                               if on is not None and starved else None),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=int, default=20, help="per phase")
    args = parser.parse_args()
    n = args.seconds
    with tempfile.TemporaryDirectory(prefix="keel-bench-") as tmp:
        lab = Lab(Path(tmp))
        try:
            rl = labs.router_lab(lab, labs.BLOATED.define(lab))
            lab.start()
            assert rl.isp and rl.lan
            topo.setup_isp(rl.isp, None)
            configs.configure_with_keel(rl, download=0, upload=0)
            hub, lan = rl.hub, rl.lan
            lan.until(f"ping -n -c 1 -W 2 {topo.HUB_TUNNEL}", 60)
            hub.until("test -s /run/keel/stall.jsonl && echo ok", 30)
            offsets = {"hub": clock_offset(hub), "lan": clock_offset(lan)}
            start_watch(hub, 4 * n + 90)  # the UI's capture lengthens the throttle
            ticks0 = meter_ticks(hub)
            lan.check(f"rm -f /run/p; (ping -D -O -n -i 0.2 {topo.HUB_TUNNEL} > /run/p &)")
            t0 = time.time()
            time.sleep(n)
            with throttled(hub.child.pid) as duty:
                # the hub's console UI, 80x24, while it starves (its watch keeps
                # writing alongside); what a user on its console would see
                screen = run_ui(hub, max(n, 20))
                left = n - (time.time() - duty.started)
                if left > 0:
                    time.sleep(left)
            time.sleep(n)
            t3 = time.time()
            lan.check("killall ping; true")
            ticks1 = meter_ticks(hub)
            samples = [(s.sent - offsets["lan"], s.rtt_ms)
                       for s in ping.track(lan.check("cat /run/p", 60), 0.2)]
            hub_recs = records(hub, offsets["hub"])
        finally:
            lab.close()
    assert duty.started is not None and duty.ended is not None
    rows = [phase_row("throttle off", samples, hub_recs, t0 + 3, duty.started, None),
            phase_row("throttle on", samples, hub_recs, duty.started, duty.ended, duty.started),
            phase_row("off again", samples, hub_recs, duty.ended + 12, t3, None)]
    hub_cost = (ticks1[0] - ticks0[0]) / 100 / max(1e-9, ticks1[1] - ticks0[1])
    host_cost = host_meter_cost(60)
    cols = ["phase", "ping_p50_ms", "ping_p95_ms", "hub_load", "stall_p99_ms", "stall_max_ms",
            "steal_pct", "verdict", "seconds_to_verdict"]
    lines = ["# The starving VPS (bench.starving)", "",
             f"hub throttled {duty.stopped_s * 1000:.0f} ms stopped of every "
             f"{(duty.stopped_s + duty.running_s) * 1000:.0f} ms ({duty.share:.0%} of the "
             "wall clock); lan pings the hub through the tunnel at 5 Hz", "",
             "| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    lines += ["| " + " | ".join("-" if r[c] is None else str(r[c]) for c in cols) + " |"
              for r in rows]
    lines += ["", f"stall meter's own cost: {hub_cost * 100:.2f} % of a core on the hub "
              f"(emulated: every instruction costs many host instructions), "
              f"{host_cost * 100:.2f} % of a core on this host in its steady state "
              f"({len(os.sched_getaffinity(0))} CPUs metered)"]
    lines += ["", "The hub's console UI (80x24, console profile) with the throttle on:", "",
              "```", *(row.rstrip() for row in screen.display), "```"]
    text = "\n".join(lines) + "\n"
    print(text)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "starving.md").write_text(text)
    (RESULTS / "starving.json").write_text(json.dumps(
        {"rows": rows, "hub_meter_cost": hub_cost, "host_meter_cost": host_cost}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
