"""The self-test runner the console UI drives: `keel selftest KIND --json` in a
child process (so stopping it is one signal: the child stops its iperf3 and
ping processes and restores CAKE itself), its progress lines turned into UI
events and its JSON into a Result."""

from __future__ import annotations

import ctypes
import json
import re
import signal
import subprocess
import sys
from collections.abc import Iterator, Mapping
from typing import Any

from keel.ui.selftest import Event, Progress, RecommendedRates, Result

_PROGRESS = re.compile(r"^\[\s*(\d+)%\] (\S+?):? (.*)$")


def _die_with_parent() -> None:
    """Linux: the child gets SIGTERM if the UI dies, even by SIGKILL."""
    try:
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except OSError:
        pass


def summarize(kind: str, data: Any) -> Result:
    if kind == "bufferbloat":
        runs = data if isinstance(data, list) else [data]
        final = runs[-1]
        lines = []
        for p in final["phases"]:
            t = p["tunnel"]
            inc = "" if p["increase_p50_ms"] is None else f" (+{p['increase_p50_ms']:.1f})"
            lines.append(f"{p['name']:13} p50 {t['p50_ms']:.1f} p95 {t['p95_ms']:.1f} ms{inc}")
        lines.append(f"increase +{final['increase_ms']:.1f} ms  RPM {final['rpm']:.0f} "
                     f"({final['rpm_label']})")
        if len(runs) > 1:
            bypass = runs[0]
            lines.append(f"CAKE bypassed: +{bypass['increase_ms']:.0f} ms (grade "
                         f"{bypass['grade']}) -> CAKE saves "
                         f"{bypass['increase_ms'] - final['increase_ms']:.0f} ms")
        return Result(kind, True, final["grade"], tuple(lines))
    if kind == "throughput":
        lines = []
        for p in data["phases"]:
            cost = p["seconds_per_gigabit"]
            lines.append(f"{p['name']:13} down {p['down_mbit']:.1f} up {p['up_mbit']:.1f} Mbit/s"
                         + (f"  {cost:.1f} CPU-s/Gbit" if cost is not None else ""))
        if data["cpu_bound"]:
            lines.append("CPU-bound: a core was saturated before the link")
        return Result(kind, True, None, tuple(lines),
                      RecommendedRates(data["recommend_up_kbit"] * 1000,
                                       data["recommend_down_kbit"] * 1000))
    lines = [f"WAN path MTU {data['wan_path_mtu']}, tunnel path MTU {data['tunnel_path_mtu']}"]
    if data.get("recommended_tunnel_mtu"):
        lines.append(f"WireGuard MTU to use: {data['recommended_tunnel_mtu']}")
    return Result(kind, True, None, tuple(lines))


class KeelSelfTestRunner:
    def __init__(self, argv0: tuple[str, ...] = (sys.executable, "-m", "keel.cli")) -> None:
        self.argv0 = argv0

    def start(self, kind: str, options: Mapping[str, Any]) -> Iterator[Event]:
        argv = [*self.argv0, "selftest", kind, "--json"]
        if options.get("compare"):
            argv.append("--compare")
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                stdin=subprocess.DEVNULL, text=True,
                                preexec_fn=_die_with_parent)
        error = ""
        try:
            assert proc.stderr is not None
            for line in proc.stderr:
                m = _PROGRESS.match(line.strip())
                if m:
                    yield Progress(int(m[1]) / 100, m[2], m[3])
                elif line.strip():
                    error = line.strip()
            out = proc.stdout.read() if proc.stdout else ""
            rc = proc.wait()
            if rc != 0:
                yield Result(kind, False, error=error or f"keel selftest {kind} failed ({rc})")
                return
            yield summarize(kind, json.loads(out))
        finally:
            if proc.poll() is None:
                proc.terminate()  # the child stops its load and restores CAKE
                try:
                    proc.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    proc.kill()
