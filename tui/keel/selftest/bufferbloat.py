"""The bufferbloat self-test: latency at idle, then under download, upload and
bidirectional load through the tunnel, probed at 5 Hz through the tunnel and
to the peer's public address outside it (keel.wireguard.peers: its endpoint,
an IPv6 one when the WAN has IPv6).

The increase of a phase is its median RTT minus the idle median (p95 too);
the grade averages the download and upload increases (DSLReports' method).
"""

from __future__ import annotations

import math
import time

from keel.parse import iperf3
from keel.selftest.events import Progress, Report, Sample, SelfTestError, ignore
from keel.selftest.grading import grade, latency_stats, rpm
from keel.selftest.peer import RAMP_S, iperf3_argv
from keel.selftest.procs import Processes
from keel.selftest.results import BufferbloatResult, PhaseResult
from keel.system.ping import PingProcess
from keel.wireguard.peers import TunnelPeer

LOADS = (("download", ["-R"]), ("upload", []), ("bidirectional", ["--bidir"]))


def _wait_for_tunnel(probe: PingProcess, seconds: float) -> None:
    deadline = time.time() + seconds
    while time.time() < deadline:
        if any(s.rtt_ms is not None for s in probe.samples):
            return
        time.sleep(0.2)
    raise SelfTestError(f"no reply from {probe.target} through the tunnel in {seconds:.0f} s: "
                        "is the tunnel up? (keel doctor)")


def _sleep_with_progress(seconds: float, report: Report, phase: str, done: float,
                         share: float) -> None:
    end = time.time() + seconds
    while (left := end - time.time()) > 0:
        report(Progress("bufferbloat", phase, done + share * (1 - left / seconds),
                        f"{phase}: {left:.0f} s left"))
        time.sleep(min(1.0, left))


def _run_load(procs: Processes, peer: TunnelPeer, args: list[str], seconds: int, streams: int,
              report: Report, phase: str, done: float, share: float) -> iperf3.Iperf3Result:
    proc = procs.start(iperf3_argv(peer, streams, seconds, "--json", *args))
    start = time.time()
    seconds += RAMP_S
    while proc.poll() is None:
        elapsed = time.time() - start
        if elapsed > seconds + 20:
            procs.stop(proc)
            raise SelfTestError(f"iperf3 to {peer.tunnel_ip} did not finish")
        report(Progress("bufferbloat", phase, done + share * min(1.0, elapsed / seconds),
                        f"{phase}: {max(0, seconds - elapsed):.0f} s left"))
        time.sleep(0.5)
    out = proc.stdout.read() if proc.stdout else ""
    try:
        return iperf3.parse_json(out)
    except iperf3.Iperf3Error as err:
        raise SelfTestError(f"iperf3 against {peer.tunnel_ip}: {err} "
                            "(does the peer run an iperf3 server on its tunnel address?)") from None
    except ValueError:
        raise SelfTestError(f"iperf3 against {peer.tunnel_ip} gave no result") from None


def run_bufferbloat(peer: TunnelPeer, *, idle_s: int = 5, load_s: int = 10, streams: int = 4,
                    interval: float = 0.2, report: Report = ignore,
                    cake_bypassed: bool = False) -> BufferbloatResult:
    if idle_s < 5 or load_s < 10:
        raise SelfTestError("the idle phase needs at least 5 s and each load at least 10 s")
    if interval > 0.2:
        raise SelfTestError("latency must be probed at 5 Hz or faster (interval <= 0.2 s)")
    phase_now = ["idle"]
    total = idle_s + 3 * (load_s + RAMP_S + 1)

    def pinger(target: str, addr: str, mark: int | None = None) -> PingProcess:
        probe = PingProcess(addr, interval, spawn=procs.start, mark=mark,
                            on_sample=lambda s: report(Sample(target, addr, phase_now[0], s)))
        probe.start()
        return probe

    windows: dict[str, tuple[float, float]] = {}
    loads: dict[str, iperf3.Iperf3Result] = {}
    with Processes() as procs:
        inside = pinger("tunnel", peer.tunnel_ip)
        outside = pinger("outside", peer.public_ip, peer.fwmark) if peer.public_ip else None
        report(Progress("bufferbloat", "idle", 0.0, f"waiting for {peer.tunnel_ip}"))
        _wait_for_tunnel(inside, 15)
        start = time.time()
        _sleep_with_progress(idle_s, report, "idle", 0.0, idle_s / total)
        windows["idle"] = (start, time.time())
        done = idle_s / total
        for name, args in LOADS:
            phase_now[0] = name
            start = time.time()
            loads[name] = _run_load(procs, peer, args, load_s, streams, report, name, done,
                                    (load_s + RAMP_S + 1) / total)
            windows[name] = (start + RAMP_S, time.time())
            done += (load_s + RAMP_S + 1) / total
            time.sleep(1.0)  # let the queues drain between phases
        last = max(end for _, end in windows.values())
        for probe in (inside, outside):
            if probe is not None:
                probe.settle(last)
        report(Progress("bufferbloat", "done", 1.0, "done"))
        samples_in = {n: inside.between(*w) for n, w in windows.items()}
        samples_out = {n: outside.between(*w) for n, w in windows.items()} if outside else {}
    return summarize(samples_in, samples_out, loads, cake_bypassed, windows)


def summarize(samples_in, samples_out, loads, cake_bypassed: bool,
              windows: dict[str, tuple[float, float]] | None = None) -> BufferbloatResult:
    windows = windows or {}
    idle = latency_stats([s.rtt_ms for s in samples_in["idle"]])
    if math.isnan(idle.p50_ms):
        raise SelfTestError("no latency sample came back at idle")
    phases = []
    for name in ("idle", "download", "upload", "bidirectional"):
        tunnel = latency_stats([s.rtt_ms for s in samples_in.get(name, [])])
        out = samples_out.get(name)
        outside = latency_stats([s.rtt_ms for s in out]) if out is not None else None
        result = loads.get(name)
        down = up = None
        if result is not None:
            if name == "download":
                down = result.received_bps / 1e6
            elif name == "upload":
                up = result.received_bps / 1e6
            else:
                up = result.received_bps / 1e6
                down = (result.bidir_reverse_bps or 0.0) / 1e6
        if name == "idle":
            phases.append(PhaseResult(name, tunnel, outside, None, None, None, None, None,
                                      windows.get(name, (0.0, 0.0))))
            continue
        inc50 = max(0.0, tunnel.p50_ms - idle.p50_ms)
        inc95 = max(0.0, tunnel.p95_ms - idle.p50_ms)
        if math.isnan(inc50):
            inc50 = inc95 = float("inf")  # every probe lost under load
        phases.append(PhaseResult(name, tunnel, outside, inc50, inc95, grade(inc50), down, up,
                                  windows.get(name, (0.0, 0.0))))
    by = {p.name: p for p in phases}
    increase = (by["download"].increase_p50_ms + by["upload"].increase_p50_ms) / 2
    loaded = [p.tunnel.p50_ms for p in phases[1:] if not math.isnan(p.tunnel.p50_ms)]
    loaded_rtt = sum(loaded) / len(loaded) if loaded else float("inf")
    return BufferbloatResult(tuple(phases), increase, grade(increase),
                             rpm(loaded_rtt) if loaded_rtt != float("inf") else 0.0,
                             cake_bypassed)
