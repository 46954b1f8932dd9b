"""The throughput self-test: iperf3 through the tunnel (download, upload,
bidirectional; parallel streams), with the tunnel's CPU cost measured over
each phase: softirq plus wg-crypt worker time, as CPU-seconds per gigabit."""

from __future__ import annotations

import json
import time

from keel.metrics.cpucost import tunnel_cost
from keel.metrics.snapshots import TunnelCost
from keel.parse import iperf3, kworkers, procstat
from keel.selftest.events import Progress, Report, SelfTestError, ignore
from keel.selftest.peer import iperf3_argv
from keel.selftest.procs import Processes
from keel.selftest.results import ThroughputPhase, ThroughputResult
from keel.system.cpu_times import read_cpu_times
from keel.system.kworkers import HZ, read_kworkers
from keel.system.links import read_counters
from keel.thresholds import CORE_SATURATED
from keel.wireguard.peers import TunnelPeer

PHASES = (("download", ["-R"]), ("upload", []), ("bidirectional", ["--bidir"]))


def wg_bytes(ifname: str) -> int:
    counters = read_counters(ifname)
    if counters is None:
        raise SelfTestError(f"cannot read {ifname}'s counters: is the tunnel up?")
    return counters.rx_bytes + counters.tx_bytes


def _run_phase(procs: Processes, peer: TunnelPeer, name: str, args: list[str], seconds: int,
               streams: int, report: Report, done: float, share: float) -> ThroughputPhase:
    stat_before = read_cpu_times()
    crypt_before = read_kworkers()
    bytes_before = wg_bytes(peer.interface)
    proc = procs.start(iperf3_argv(peer, streams, seconds, "--json-stream", *args))
    end_result: iperf3.Iperf3Result | None = None
    assert proc.stdout is not None
    for line in proc.stdout:
        try:
            event, data = iperf3.parse_stream_line(line)
        except iperf3.Iperf3Error as err:
            raise SelfTestError(f"iperf3 against {peer.tunnel_ip}: {err} (does the peer run "
                                "an iperf3 server on its tunnel address?)") from None
        except ValueError:
            continue
        if event == "interval" and data:
            t = data[0].end
            mbit = sum(i.bps for i in data) / 1e6
            ramp = " (ramping up)" if data[0].omitted else ""
            report(Progress("throughput", name, done + share * min(1.0, t / seconds),
                            f"{name}: {mbit:.1f} Mbit/s at {t:.0f} s{ramp}"))
        elif event == "end":
            end_result = data
    proc.wait()
    stat_after = read_cpu_times()
    crypt_after = read_kworkers()
    tunnel_bytes = wg_bytes(peer.interface) - bytes_before
    if end_result is None:
        raise SelfTestError(f"iperf3 against {peer.tunnel_ip} ended without a result")
    cost: TunnelCost | None = tunnel_cost(stat_before, stat_after,
                                          kworkers.crypt_ticks_between(crypt_before, crypt_after),
                                          tunnel_bytes, HZ)
    shares = procstat.shares(stat_before, stat_after)
    busy = {c: round(s.busy, 3) for c, s in shares.items() if c != "cpu"}
    if name == "download":
        down, up = end_result.received_bps, 0.0
    elif name == "upload":
        down, up = 0.0, end_result.received_bps
    else:
        down, up = end_result.bidir_reverse_bps or 0.0, end_result.received_bps
    return ThroughputPhase(
        name=name, down_mbit=round(down / 1e6, 2), up_mbit=round(up / 1e6, 2),
        retransmits=end_result.retransmits, cpu_local_pct=end_result.cpu_local,
        cpu_remote_pct=end_result.cpu_remote,
        tunnel_cpu_seconds=round(cost.cpu_seconds, 3) if cost else 0.0,
        seconds_per_gigabit=(round(cost.seconds_per_gigabit, 2)
                             if cost and cost.seconds_per_gigabit is not None else None),
        core_busy=busy, cpu_bound=any(b >= CORE_SATURATED for b in busy.values()))


def run_throughput(peer: TunnelPeer, *, seconds: int = 10, streams: int = 4,
                   report: Report = ignore) -> ThroughputResult:
    phases = []
    with Processes() as procs:
        for i, (name, args) in enumerate(PHASES):
            phases.append(_run_phase(procs, peer, name, args, seconds, streams, report,
                                     i / len(PHASES), 1 / len(PHASES)))
            time.sleep(1.0)
    report(Progress("throughput", "done", 1.0, "done"))
    down = max(p.down_mbit for p in phases)
    up = max(p.up_mbit for p in phases)
    return ThroughputResult(tuple(phases), int(down * 900), int(up * 900))


def dumps(result: ThroughputResult) -> str:
    return json.dumps(result.as_dict(), indent=1)
