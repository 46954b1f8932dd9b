"""Self-test results as text lines: the long form `keel selftest` prints and
the short form (56 columns) the console UI's self-test screen shows."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from keel.selftest.results import BufferbloatResult, MtuResult, TestResult, ThroughputResult

BUFFERBLOAT_PHASES = ("idle", "download", "upload", "bidirectional")


def fmt_ms(value: float | None) -> str:
    return "-" if value is None or value != value else f"{value:.1f}"


# --- the command line -------------------------------------------------------

def throughput_lines(result: ThroughputResult) -> list[str]:
    lines = []
    for p in result.phases:
        cost = (f"{p.seconds_per_gigabit:.1f} CPU-s/Gbit"
                if p.seconds_per_gigabit is not None else "-")
        busy = " ".join(f"{c} {b * 100:.0f}%" for c, b in p.core_busy.items())
        lines.append(f"{p.name:14} down {p.down_mbit:7.1f}  up {p.up_mbit:7.1f} Mbit/s  "
                     f"retr {p.retransmits}  tunnel {cost}  ({busy})")
    if result.cpu_bound:
        lines.append("The tunnel is CPU-bound: a core was saturated; the link may carry more.")
    lines.append(f"Recommended CAKE rates (90 %): download {result.recommend_down_kbit} kbit/s, "
                 f"upload {result.recommend_up_kbit} kbit/s")
    return lines


def bufferbloat_lines(results: Sequence[BufferbloatResult]) -> list[str]:
    """A table with a column per run (with CAKE bypassed first when compared)."""
    lines = [f"{'phase':14}" + "".join(
        f"  {'(CAKE bypassed)' if r.cake_bypassed else '(with CAKE)':>37}" for r in results)]
    lines.append(f"{'':14}" + "  p50 / p95 / p99 ms  +p50   grade  Mbit/s" * len(results))
    for name in BUFFERBLOAT_PHASES:
        row = f"{name:14}"
        for r in results:
            p = r.phase(name)
            t = p.tunnel
            mbit = "/".join(f"{v:.1f}" for v in (p.down_mbit, p.up_mbit) if v is not None)
            row += (f"  {fmt_ms(t.p50_ms):>6}/{fmt_ms(t.p95_ms):>6}/{fmt_ms(t.p99_ms):>6}"
                    f" {fmt_ms(p.increase_p50_ms):>6} {p.grade or '':>5} {mbit:>8}")
        lines.append(row)
    for r in results:
        label = "CAKE bypassed" if r.cake_bypassed else "with CAKE"
        lines.append(f"{label}: grade {r.grade} (latency increase {r.increase_ms:.1f} ms), "
                     f"RPM {r.rpm:.0f} ({r.rpm_label})")
    for r in results:
        for p in r.phases:
            if p.outside is not None and p.name != "idle":
                gap = p.tunnel.p50_ms - p.outside.p50_ms
                lines.append(f"  {p.name}: outside the tunnel p50 {fmt_ms(p.outside.p50_ms)} "
                             f"ms; the tunnel adds {fmt_ms(gap)} ms")
                break
    return lines


def mtu_lines(result: MtuResult) -> list[str]:
    lines = [f"WAN: interface MTU {result.wan_interface_mtu}, path MTU to the peer "
             f"{result.wan_path_mtu}",
             f"tunnel: interface MTU {result.tunnel_interface_mtu}, path MTU "
             f"{result.tunnel_path_mtu}"]
    if result.recommended_tunnel_mtu:
        lines.append(f"WireGuard MTU to use: {result.recommended_tunnel_mtu}")
    return lines


def _by_kind(results: Sequence[TestResult],
             bufferbloat: Callable[[Sequence[BufferbloatResult]], list[str]],
             throughput: Callable[[ThroughputResult], list[str]],
             mtu: Callable[[MtuResult], list[str]]) -> list[str]:
    """The bufferbloat runs together (bypassed and with CAKE side by side),
    then each other result, by the formatter of its kind."""
    bloat = [r for r in results if isinstance(r, BufferbloatResult)]
    lines = bufferbloat(bloat) if bloat else []
    for r in results:
        if isinstance(r, ThroughputResult):
            lines += throughput(r)
        elif isinstance(r, MtuResult):
            lines += mtu(r)
    return lines


def result_lines(results: Sequence[TestResult]) -> list[str]:
    """What `keel selftest` prints for the results of one run."""
    return _by_kind(results, bufferbloat_lines, throughput_lines, mtu_lines)


# --- the console UI ---------------------------------------------------------

def short_throughput_lines(result: ThroughputResult) -> list[str]:
    lines = []
    for p in result.phases:
        cost = p.seconds_per_gigabit
        lines.append(f"{p.name:13} down {p.down_mbit:.1f} up {p.up_mbit:.1f} Mbit/s"
                     + (f"  {cost:.1f} CPU-s/Gbit" if cost is not None else ""))
    if result.cpu_bound:
        lines.append("CPU-bound: a core was saturated before the link")
    return lines


def short_bufferbloat_lines(results: Sequence[BufferbloatResult]) -> list[str]:
    """The last run (with CAKE) by phase; a CAKE-bypassed run before it in one line."""
    final = results[-1]
    lines = []
    for p in final.phases:
        t = p.tunnel
        inc = "" if p.increase_p50_ms is None else f" (+{p.increase_p50_ms:.1f})"
        lines.append(f"{p.name:13} p50 {t.p50_ms:.1f} p95 {t.p95_ms:.1f} ms{inc}")
    lines.append(f"increase +{final.increase_ms:.1f} ms  RPM {final.rpm:.0f} "
                 f"({final.rpm_label})")
    if len(results) > 1:
        bypass = results[0]
        lines.append(f"CAKE bypassed: +{bypass.increase_ms:.0f} ms (grade {bypass.grade}) "
                     f"-> CAKE saves {bypass.increase_ms - final.increase_ms:.0f} ms")
    return lines


def short_mtu_lines(result: MtuResult) -> list[str]:
    lines = [f"WAN path MTU {result.wan_path_mtu}, tunnel path MTU {result.tunnel_path_mtu}"]
    if result.recommended_tunnel_mtu:
        lines.append(f"WireGuard MTU to use: {result.recommended_tunnel_mtu}")
    return lines


def short_lines(results: Sequence[TestResult]) -> list[str]:
    """What the console UI shows for the results of one run."""
    return _by_kind(results, short_bufferbloat_lines, short_throughput_lines, short_mtu_lines)
