"""What each dashboard panel says: pure functions from snapshots to lines."""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text

from keel.metrics.collectors import CakeCollector
from keel.metrics.snapshots import (
    CakeDirection,
    CakeSnapshot,
    CpuSnapshot,
    LatencySnapshot,
    TuningSnapshot,
    TunnelSnapshot,
)
from keel.metrics.verdict import VerdictSnapshot
from keel.thresholds import ADAPT_PEER_LOST_S, GRADE_LINES_MS, HANDSHAKE_STALE_S
from keel.ui import fmt
from keel.ui.bars import CONSOLE_BARS, bar_rows

TITLE = "bold"
WARN = "bold red"
DIM = "bright_black"
MAX_PEERS = 3
MAX_CORES = 4
TIN_SHORT = {"Best Effort": "BE"}

# the dashboard's panels and their border titles (the lines below carry no
# name of their own)
TITLES = {"verdict": "NOW  what limits latency", "tunnel": "TUNNEL",
          "cpu": "CPU  tunnel = sirq + wg-crypt",
          "latency": "LATENCY  ms", "cake": "CAKE  bit/s", "tuning": "TUNING"}


def target_cell(target: str, width: int = 15) -> str:
    """A probe's target in its column: an IPv6 address longer than it keeps
    its start and its end (its last groups tell peers apart)."""
    if len(target) <= width:
        return target
    tail = (width - 2) // 2 + 1
    return target[:width - 2 - tail] + ".." + target[-tail:]


def _note(text: str, style: str = DIM) -> Text:
    return Text(text, style=style)


def rate_label(name: str, bps: float | None) -> str:
    """A sparkline's label: "rx 240.0M " (the rate now, bits/s)."""
    return f"{name} {fmt.rate(bps, 6)} "


def tunnel_rates(snap: TunnelSnapshot | None) -> tuple[float | None, float | None]:
    """The tunnel's rx and tx now (every interface together), or None."""
    if snap is None or snap.error or not snap.interfaces:
        return None, None
    rx = [i.rx_bps for i in snap.interfaces]
    tx = [i.tx_bps for i in snap.interfaces]
    return (None if None in rx else sum(rx),  # type: ignore[arg-type]
            None if None in tx else sum(tx))  # type: ignore[arg-type]


def tunnel_lines(snap: TunnelSnapshot | None) -> list[Text]:
    """The interfaces (port, packets/s) and the peers (endpoint, handshake,
    rates) under the sparklines."""
    if snap is None:
        return [_note("reading wg ...")]
    if snap.error:
        return [_note(snap.error, WARN)]
    if not snap.interfaces:
        return [_note("no WireGuard interface", WARN)]
    lines = []
    for iface in snap.interfaces:
        pkts = ""
        if iface.rx_pps is not None and iface.tx_pps is not None:
            pkts = f"  {fmt.count(iface.rx_pps)}/{fmt.count(iface.tx_pps)} pkt/s rx/tx"
        lines.append(Text(f"{iface.name} :{iface.listen_port}{pkts}"))
    peers = snap.peers
    for peer in peers[:MAX_PEERS]:
        age = peer.handshake_age
        stale = age is None or age > HANDSHAKE_STALE_S
        line = Text(f"{fmt.short_key(peer.public_key)} {peer.endpoint or '(no endpoint)'} hs ")
        line.append(fmt.age(age), style=WARN if stale else "")
        line.append(f" {fmt.rate(peer.rx_bps)}/{fmt.rate(peer.tx_bps)}")
        lines.append(line)
    if len(peers) > MAX_PEERS:
        lines.append(_note(f"... {len(peers) - MAX_PEERS} more peers"))
    if not peers:
        lines.append(_note("no peers", WARN))
    return lines


def cpu_lines(snap: CpuSnapshot | None) -> list[Text]:
    """Per core (the busiest MAX_CORES), then what the tunnel costs:
    softirq + the wg-crypt workers (the panel's title says so)."""
    if snap is None or (not snap.cores and not snap.error):
        return [_note("measuring ..."), Text(""), Text("")]
    if snap.error:
        return [_note(snap.error, WARN)]
    cores = list(snap.cores)
    lines = [Text(f"{'':<6}user  sys sirq steal idle", style=TITLE)]
    if len(cores) > MAX_CORES:
        lines[0].append(f"  {MAX_CORES} busiest of {len(snap.cores)}", style=DIM)
        cores = sorted(cores, key=lambda c: c.softirq + c.system + c.user, reverse=True)
        cores = sorted(cores[:MAX_CORES], key=lambda c: c.cpu)
    for c in cores:
        lines.append(Text(f"{c.cpu:<6}{fmt.pct(c.user)} {fmt.pct(c.system)} {fmt.pct(c.softirq)}"
                          f" {fmt.pct(c.steal, 5)} {fmt.pct(c.idle)}"))
    cost = snap.cost
    if cost is None:
        lines.append(Text("tunnel -"))
    else:
        lines.append(Text(f"tunnel {cost.cores:.2f} core = {cost.percent:.0f}% of "
                          f"{cost.ncpus} CPU{'' if cost.ncpus == 1 else 's'}"))
        spg = cost.seconds_per_gigabit
        if spg is None:
            lines.append(_note(" CPU-s/Gbit: - (no traffic)"))
        else:
            lines.append(Text(f" {spg:.1f} CPU-s/Gbit at {fmt.rate(cost.throughput_bps)}bit/s"))
    lines.extend(Text("! " + w, style=WARN) for w in snap.warnings)
    return lines


VERDICT_STYLE = {"bad": WARN, "warn": "bold yellow", "ok": "green"}


def verdict_lines(snap: VerdictSnapshot | None, width: int = 80) -> list[Text]:
    """One line: what limits latency now (the worst verdict), with the stall
    meter's figures when it runs."""
    if snap is None or snap.worst is None:
        return [_note("judging ...")]
    worst = snap.worst
    line = Text(worst.text, style=VERDICT_STYLE.get(worst.severity, ""))
    if worst.cause == "healthy" and snap.signals is not None:
        s = snap.signals
        stall = ("no stall meter" if s.stall_max_ms is None
                 else f"stall max {s.stall_max_ms:.0f} ms")
        steal = "" if s.steal is None else f", steal {s.steal * 100:.0f}%"
        line.append(f": {stall}{steal}", style=DIM)
    if len(snap.verdicts) > 1:
        line.append(f" (+{len(snap.verdicts) - 1} more: [v])", style=DIM)
    if line.cell_len > width:  # an ASCII ellipsis: Rich's is not in the VGA font
        line.truncate(width - 3)
        line.append("...", style=DIM)
    return [line]


def latency_lines(snap: LatencySnapshot | None, glyphs: dict[str, str],
                  empty: str = "no probe target (no WireGuard peer?)") -> list[Text]:
    """One line a series (its glyph on the plot, the last RTT, the idle
    baseline, the loss), then the gap between the two idle baselines."""
    if snap is None or not snap.series:
        return [_note(empty), Text("")]
    lines = []
    gap = snap.tunnel_cost_ms
    tail = (f"gap {fmt.ms(gap)} ms is the", "tunnel's own cost") if gap is not None else ("", "")
    for i, s in enumerate(snap.series):
        line = Text(f"{glyphs.get(s.name, '?')} ", style="bold cyan" if s.name == "tunnel"
                    else "yellow")
        line.append(f"{s.name:<8}{target_cell(s.target):<15}{fmt.ms(s.last_ms):>6} ms "
                    f"idle {fmt.ms(s.idle_ms):<5}")
        line.append(f"loss {s.loss * 100:2.0f}%", style=WARN if s.loss > 0.02 else "")
        if i < 2 and tail[i]:
            line.append(f"  {tail[i]}", style=DIM)
        lines.append(line)
    if len(lines) < 2:
        bounds = "/".join(f"+{g:g}" for g in GRADE_LINES_MS)
        lines.append(_note(f"5 Hz probes; dashed lines at idle {bounds} ms (grade bounds)"))
    return lines


def _bounds(low: float, high: float) -> str:
    """ "20.0-44.0M", "600k-1.5M": adaptive CAKE's range in few columns."""
    a, b = fmt.rate(low), fmt.rate(high)
    return f"{a[:-1] if a[-1:] == b[-1:] and a[-1:].isalpha() else a}-{b}"


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values)


def adaptive_line(d: CakeDirection, width: int, bars: str,
                  peer_silent_s: float | None = None) -> Text:
    """Under an adaptive direction: its range, then CAKE's rate and what went
    through over the last minutes, two sparklines on one scale (zero to the
    maximum): a rate cut shows as lower bars, a line used to its rate as the
    two alike. Each column is the mean of its seconds (the highest would hide
    a cut); the oldest may hold fewer (the dashboard just opened)."""
    a = d.adaptive
    if a is None:
        return Text("")
    line = Text(f"  adaptive {_bounds(a.min_bps, a.max_bps)}")
    if peer_silent_s is not None and peer_silent_s > ADAPT_PEER_LOST_S:
        line.append(f" peer silent {fmt.age(peer_silent_s)}: the base", style=WARN)
        return line
    spark = (width - line.cell_len - len(" rate  thru ")) // 2
    if spark < 4:
        return line
    seconds = max(1, CakeCollector.HISTORY // spark)  # the columns span the history kept
    for label, data, style in ((" rate ", d.rate_history, "bold cyan"),
                               (" thru ", d.throughput_history, "green")):
        row = bar_rows(data, spark, 1, seconds, bars, top=float(a.max_bps), agg=_mean,
                       partial=True)[0]
        line.append(label)
        line.append(row, style=style)
    return line


def cake_title(snap: CakeSnapshot | None) -> str:
    """The panel's title: with adaptive CAKE, how far back its sparklines go."""
    title = TITLES["cake"]
    if snap is None or not snap.adaptive:
        return title
    return f"{title}, adaptive: last {CakeCollector.HISTORY // 60} min"


def cake_lines(snap: CakeSnapshot | None, width: int = 54,
               bars: str = CONSOLE_BARS) -> list[Text]:
    """Per direction: its rate, throughput, backlog, drops and ECN marks,
    then the tins' delays; an adaptive direction (adaptive_line) has a line
    more between the two. `width` and `bars` are for its sparklines."""
    head = Text(f"{'':<8}{'dev':<9}{'rate':>5} {'thru':>5} backlog drops ecn", style=TITLE)
    if snap is None:
        return [head]
    if snap.error:
        return [_note(snap.error, WARN)]
    if not snap.directions:
        return [_note("no CAKE qdisc: the queue is not managed", WARN)]
    lines = [head]
    for d in snap.directions:
        rate = fmt.rate(d.rate_bps) if d.rate_bps is not None else "unlim"
        lines.append(Text(f"{d.direction:<8}{d.dev:<9}{rate:>5} {fmt.rate(d.throughput_bps):>5}"
                          f" {fmt.size(d.backlog_bytes):>7} {d.drops:>5} {d.ecn_marks:>3}"))
        if d.adaptive is not None:
            lines.append(adaptive_line(d, width, bars, snap.peer_silent_s))
        # a tin with no delay carries nothing: left out (diffserv4 has four)
        busy = [t for t in d.tins if t.peak_delay_ms or t.avg_delay_ms]
        tins = " ".join(f"{TIN_SHORT.get(t.name, t.name)} {fmt.ms(t.peak_delay_ms)}/"
                        f"{fmt.ms(t.avg_delay_ms)}" for t in busy) or "-"
        lines.append(Text(f"  peak/avg ms {tins}", style="" if busy else DIM))
    return lines


def tuning_lines(snap: TuningSnapshot | None) -> list[Text]:
    """One fact a line: the panel is a narrow column."""
    if snap is None:
        return [_note("reading ...")]
    if snap.error:
        return [_note(snap.error, WARN)]
    mhz = f"{snap.cur_mhz:.0f} MHz" if snap.cur_mhz is not None else "? MHz"
    if snap.managed_by_hypervisor:
        return [Text("managed by the hypervisor"), _note("(no cpufreq/cpuidle)"),
                Text(f"{mhz}: watch steal")]
    gov = "/".join(snap.governors) or "none"
    lines = [Text(f"governor {gov}", style="" if gov == "performance" else WARN)]
    if snap.max_mhz:
        slow = snap.cur_mhz is not None and snap.cur_mhz < 0.9 * snap.max_mhz
        lines.append(Text(f"{snap.cur_mhz or 0:.0f}/{snap.max_mhz:.0f} MHz",
                          style=WARN if slow else ""))
    else:
        lines.append(Text(mhz))
    if snap.idle_allowed or snap.idle_disabled:
        off = f" ({' '.join(snap.idle_disabled)} off)" if snap.idle_disabled else ""
        lines.append(Text(f"idle {' '.join(snap.idle_allowed) or 'none'}{off}"))
    lines.append(Text(f"PM QoS {snap.pm_qos_us}us" if snap.pm_qos_us is not None else
                      "PM QoS none"))
    return lines
