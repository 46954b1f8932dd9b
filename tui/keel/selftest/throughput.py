"""The throughput self-test: iperf3 through the tunnel (download, upload,
bidirectional; parallel streams), with the tunnel's CPU cost measured over
each phase: softirq plus wg-crypt worker time, as CPU-seconds per gigabit."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from keel.metrics.collectors import read_tasks, scan_kworkers
from keel.metrics.cpucost import tunnel_cost
from keel.metrics.snapshots import TunnelCost
from keel.metrics.source import RealSource
from keel.parse import iperf3, kworkers, procstat
from keel.selftest.events import Progress, Report, SelfTestError, ignore
from keel.selftest.peer import Peer
from keel.selftest.procs import Processes
from keel.selftest.results import ThroughputPhase, ThroughputResult

PHASES = (("download", ["-R"]), ("upload", []), ("bidirectional", ["--bidir"]))
BUSY = 0.90  # a core this busy is saturated
HZ = os.sysconf("SC_CLK_TCK")


def read_kworkers() -> dict[int, kworkers.TaskTime]:
    """Every kernel worker's CPU time, by pid (which of them ran wg-crypt work
    is decided between two reads: see kworkers.crypt_ticks_between)."""
    source = RealSource()
    return read_tasks(source, scan_kworkers(source))


def wg_bytes(ifname: str, net: Path = Path("/sys/class/net")) -> int:
    stats = net / ifname / "statistics"
    return int((stats / "rx_bytes").read_text()) + int((stats / "tx_bytes").read_text())


def _run_phase(procs: Processes, peer: Peer, name: str, args: list[str], seconds: int,
               streams: int, report: Report, done: float, share: float) -> ThroughputPhase:
    stat_before = procstat.parse_proc_stat(Path("/proc/stat").read_text())
    crypt_before = read_kworkers()
    bytes_before = wg_bytes(peer.interface)
    proc = procs.start(peer.iperf3(streams, seconds, "--json-stream", *args))
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
    stat_after = procstat.parse_proc_stat(Path("/proc/stat").read_text())
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
        core_busy=busy, cpu_bound=any(b >= BUSY for b in busy.values()))


def run_throughput(peer: Peer, *, seconds: int = 10, streams: int = 4,
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
