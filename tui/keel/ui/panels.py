"""What each dashboard panel says: pure functions from snapshots to lines."""

from __future__ import annotations

from rich.text import Text

from keel.metrics.snapshots import (
    CakeSnapshot,
    CpuSnapshot,
    LatencySnapshot,
    TuningSnapshot,
    TunnelSnapshot,
)
from keel.metrics.verdict import VerdictSnapshot
from keel.thresholds import HANDSHAKE_STALE_S
from keel.ui import fmt

TITLE = "bold"
WARN = "bold red"
DIM = "bright_black"
MAX_PEERS = 3
MAX_CORES = 4
TIN_SHORT = {"Best Effort": "BE"}


def _title(name: str, rest: str = "", style: str = "") -> Text:
    line = Text(f"{name:<8}", style=TITLE)
    line.append(rest, style=style)
    return line


def tunnel_lines(snap: TunnelSnapshot | None) -> list[Text]:
    if snap is None:
        return [_title("TUNNEL", "reading wg ...", DIM)]
    if snap.error:
        return [_title("TUNNEL", snap.error, WARN)]
    if not snap.interfaces:
        return [_title("TUNNEL", "no WireGuard interface", WARN)]
    lines = []
    for i, iface in enumerate(snap.interfaces):
        pkts = ""
        if iface.rx_pps is not None and iface.tx_pps is not None:
            pkts = f"  {fmt.count(iface.rx_pps)}/{fmt.count(iface.tx_pps)} pkt/s"
        rest = (f"{iface.name} :{iface.listen_port:<6} rx {fmt.rate(iface.rx_bps, 6)}  "
                f"tx {fmt.rate(iface.tx_bps, 6)} bit/s{pkts}")
        lines.append(_title("TUNNEL" if i == 0 else "", rest))
    peers = snap.peers
    for peer in peers[:MAX_PEERS]:
        age = peer.handshake_age
        stale = age is None or age > HANDSHAKE_STALE_S
        line = Text(f"  {fmt.short_key(peer.public_key)} {peer.endpoint or '(no endpoint)':<22}")
        line.append(f"handshake {fmt.age(age):>5}", style=WARN if stale else "")
        line.append(f"  rx {fmt.rate(peer.rx_bps, 6)}  tx {fmt.rate(peer.tx_bps, 6)}")
        lines.append(line)
    if len(peers) > MAX_PEERS:
        lines.append(Text(f"  ... {len(peers) - MAX_PEERS} more peers", style=DIM))
    if not peers:
        lines.append(Text("  no peers", style=WARN))
    return lines


def cpu_lines(snap: CpuSnapshot | None) -> list[Text]:
    if snap is None or (not snap.cores and not snap.error):
        return [_title("CPU", "measuring ...", DIM), Text(""), Text("")]
    if snap.error:
        return [_title("CPU", snap.error, WARN)]
    cores = list(snap.cores)
    note = ""
    if len(cores) > MAX_CORES:
        cores = sorted(cores, key=lambda c: c.softirq + c.system + c.user, reverse=True)
        cores = sorted(cores[:MAX_CORES], key=lambda c: c.cpu)
        note = f" ({MAX_CORES} busiest of {len(snap.cores)})"
    left = [Text(f"{'CPU':<7}user  sys sirq steal idle", style=TITLE)]
    for c in cores:
        left.append(Text(f" {c.cpu:<6}{fmt.pct(c.user)} {fmt.pct(c.system)} {fmt.pct(c.softirq)}"
                         f" {fmt.pct(c.steal, 5)} {fmt.pct(c.idle)}"))
    right = [Text("TUNNEL CPU = softirq + wg-crypt" + note, style=TITLE)]
    cost = snap.cost
    if cost is None:
        right.append(Text("-"))
    else:
        right.append(Text(f"{cost.cores:.2f} core = {cost.percent:.0f}% of {cost.ncpus} CPUs"))
        spg = cost.seconds_per_gigabit
        if spg is None:
            right.append(Text("CPU-s per Gbit: - (no traffic)", style=DIM))
        else:
            right.append(Text(f"{spg:.1f} CPU-s per Gbit at {fmt.rate(cost.throughput_bps)}"
                              "bit/s"))
    lines = []
    for i in range(max(len(left), len(right))):
        line = left[i].copy() if i < len(left) else Text("")
        line.pad_right(40 - line.cell_len)
        if i < len(right):
            line.append_text(right[i])
        lines.append(line)
    lines.extend(Text("! " + w, style=WARN) for w in snap.warnings)
    return lines


VERDICT_STYLE = {"bad": WARN, "warn": "bold yellow", "ok": "green"}


def verdict_lines(snap: VerdictSnapshot | None, width: int = 80) -> list[Text]:
    """One line: what limits latency now (the worst verdict), with the stall
    meter's figures when it runs."""
    line = _title("NOW", "")
    if snap is None or snap.worst is None:
        line.append("  judging ...", style=DIM)
        return [line]
    worst = snap.worst
    line.append("  ")
    line.append(worst.text, style=VERDICT_STYLE.get(worst.severity, ""))
    if worst.cause == "healthy" and snap.signals is not None:
        s = snap.signals
        stall = ("no stall meter" if s.stall_max_ms is None
                 else f"stall max {s.stall_max_ms:.0f} ms")
        steal = "" if s.steal is None else f", steal {s.steal * 100:.0f}%"
        line.append(f": {stall}{steal}", style=DIM)
    if len(snap.verdicts) > 1:
        line.append(f" (+{len(snap.verdicts) - 1} more: [v])", style=DIM)
    line.truncate(width, overflow="ellipsis")
    return [line]


def latency_lines(snap: LatencySnapshot | None, glyphs: dict[str, str],
                  empty: str = "no probe target (no WireGuard peer?)") -> list[Text]:
    if snap is None or not snap.series:
        return [_title("LATENCY", empty, DIM), Text("")]
    lines = []
    gap = snap.tunnel_cost_ms
    tail = (f"gap {fmt.ms(gap)} ms is the", "tunnel's own cost") if gap is not None else ("", "")
    for i, s in enumerate(snap.series):
        line = _title("LATENCY" if i == 0 else "")
        line.append(f"{glyphs.get(s.name, '?')} ", style="bold cyan" if s.name == "tunnel"
                    else "yellow")
        line.append(f"{s.name:<8}{s.target[:14]:<14}{fmt.ms(s.last_ms):>6} ms "
                    f"idle {fmt.ms(s.idle_ms):<5}")
        line.append(f"loss {s.loss * 100:2.0f}%", style=WARN if s.loss > 0.02 else "")
        if i < 2 and tail[i]:
            line.append(f"  {tail[i]}", style=DIM)
        lines.append(line)
    if len(lines) < 2:
        lines.append(Text(" " * 8 + "5 Hz probes; lines at idle +5/+30/+60 ms (grade bounds)",
                          style=DIM))
    return lines


def cake_lines(snap: CakeSnapshot | None) -> list[Text]:
    head = _title("CAKE", f" {'dev':<10}{'rate':>6} {'thru':>6} backlog drops  ecn  bit/s")
    if snap is None:
        return [head]
    if snap.error:
        return [_title("CAKE", snap.error, WARN)]
    if not snap.directions:
        return [_title("CAKE", "no CAKE qdisc: the queue is not managed", WARN)]
    lines = [head]
    for d in snap.directions:
        rate = fmt.rate(d.rate_bps) if d.rate_bps is not None else "unlim"
        lines.append(Text(f" {d.direction:<8}{d.dev:<10}{rate:>6} {fmt.rate(d.throughput_bps):>6}"
                          f" {fmt.size(d.backlog_bytes):>7} {d.drops:>5} {d.ecn_marks:>4}"))
        tins = "  ".join(f"{TIN_SHORT.get(t.name, t.name)} {fmt.ms(t.peak_delay_ms)}/"
                         f"{fmt.ms(t.avg_delay_ms)}" for t in d.tins)
        lines.append(Text(f"   delay peak/avg ms: {tins}", style=DIM if not d.tins else ""))
    return lines


def tuning_lines(snap: TuningSnapshot | None) -> list[Text]:
    if snap is None:
        return [_title("TUNING", "reading ...", DIM)]
    if snap.error:
        return [_title("TUNING", snap.error, WARN)]
    mhz = f"{snap.cur_mhz:.0f} MHz" if snap.cur_mhz is not None else "? MHz"
    if snap.managed_by_hypervisor:
        return [_title("TUNING", f"managed by the hypervisor (no cpufreq/cpuidle), {mhz}: "
                       "watch steal")]
    line = _title("TUNING")
    gov = "/".join(snap.governors) or "none"
    line.append(f"governor {gov}", style="" if gov == "performance" else WARN)
    if snap.max_mhz:
        slow = snap.cur_mhz is not None and snap.cur_mhz < 0.9 * snap.max_mhz
        line.append(f"  {snap.cur_mhz or 0:.0f}/{snap.max_mhz:.0f} MHz", style=WARN if slow else "")
    else:
        line.append(f"  {mhz}")
    if snap.idle_allowed or snap.idle_disabled:
        off = f" ({' '.join(snap.idle_disabled)} off)" if snap.idle_disabled else ""
        line.append(f"  idle {' '.join(snap.idle_allowed) or 'none'}{off}")
    line.append(f"  PM QoS {snap.pm_qos_us}us" if snap.pm_qos_us is not None else
                "  PM QoS none")
    return [line]
