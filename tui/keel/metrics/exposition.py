"""What keel measures in Prometheus's text format 0.0.4: pure, from immutable
inputs (a Scrape), read by `keel metrics-serve` (keel.metrics.server).

The format: per family a `# HELP` and a `# TYPE` line, then its samples,
`name{label="value",...} number`. Names match [a-zA-Z_:][a-zA-Z0-9_:]* and
label names [a-zA-Z_][a-zA-Z0-9_]* (checked here: a bad one is keel's own bug,
a ValueError). Label values come from outside (peer names, public keys,
interface names, allowed IPs, the verdict file): a backslash, a double quote
and a newline are escaped as the format says (`\\\\`, `\\"`, `\\n`), every
other character passes as it is, so a value reads back exactly; a lone
surrogate, which UTF-8 cannot carry, becomes U+FFFD. HELP text escapes a
backslash and a newline.

The WireGuard families keep the names and labels of the common exporter
(MindFlavor's prometheus_wireguard_exporter: wireguard_sent_bytes_total,
wireguard_received_bytes_total, wireguard_latest_handshake_seconds with
interface, public_key, allowed_ips, and friendly_name for a named peer), so
its dashboards work. CAKE, latency, the stall meter, the verdict and keel
itself are keel_*; units in the names, in base units (bytes, seconds, a
ratio 0..1). A figure not measured is left out, never written as 0."""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from keel.fleet.wire import Status
from keel.history.point import PATHS, Point
from keel.metrics.snapshots import CakeSnapshot
from keel.parse.wgdump import WgInterface

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
METRIC_NAME = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*")
LABEL_NAME = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*")
SURROGATE = re.compile("[\ud800-\udfff]")  # what UTF-8 cannot carry: U+FFFD instead
KINDS = ("gauge", "counter")
# what each collector is, for keel_scrape_collector_success
COLLECTORS = ("wireguard", "cake", "history")

Labels = tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class Scrape:
    """Everything one scrape exports, read by the server (none of it is
    changed here). `wireguard` None: `wg` could not be read; `cake` with its
    `error` set likewise; `point` None: no fresh history point."""

    version: str
    slot: str | None = None  # the booted slot, A or B (None: not booted by GRUB/RAUC)
    wireguard: tuple[WgInterface, ...] | None = ()
    peer_names: Mapping[str, str] = field(default_factory=dict)  # public key -> name
    cake: CakeSnapshot | None = None
    point: Point | None = None
    # (cause, severity) named now, worst first; None: the point's own causes
    verdicts: tuple[tuple[str, str], ...] | None = None
    # a hub's edges as its last poll found them (keel.fleet.hub): the edge's
    # name, its status (None: it did not answer), the hub's handshake age
    edges: tuple[EdgeSample, ...] = ()


@dataclass(frozen=True)
class EdgeSample:
    name: str
    status: Status | None
    handshake_age_s: float | None = None
    polled_at: float = 0.0  # Unix time of the poll


@dataclass
class Family:
    """One metric family being built: its samples in the order added."""

    name: str
    kind: str
    help: str
    samples: list[tuple[Labels, float]] = field(default_factory=list)

    def add(self, value: float | None, **labels: str) -> None:
        """A sample; None (not measured) adds nothing."""
        if value is not None:
            self.samples.append((tuple(labels.items()), value))


def escape_label_value(value: str) -> str:
    """A label value as the format writes it between its double quotes."""
    value = SURROGATE.sub("\ufffd", value)
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def escape_help(text: str) -> str:
    return text.replace("\\", "\\\\").replace("\n", "\\n")


def format_value(value: float) -> str:
    """A sample's number: integers as they are, floats by repr (Go's
    ParseFloat reads both), NaN and the infinities as the format spells
    them."""
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, int):
        return str(value)
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    return repr(float(value))


def render_families(families: Iterable[Family]) -> str:
    """The text of the families, each name once (ValueError for a bad name,
    label name or kind, or a name given twice: keel's own bugs)."""
    out: list[str] = []
    seen: set[str] = set()
    for fam in families:
        if not METRIC_NAME.fullmatch(fam.name) or fam.kind not in KINDS or fam.name in seen:
            raise ValueError(f"metric family {fam.name!r} ({fam.kind})")
        seen.add(fam.name)
        out.append(f"# HELP {fam.name} {escape_help(fam.help)}")
        out.append(f"# TYPE {fam.name} {fam.kind}")
        for labels, value in fam.samples:
            for name, _ in labels:
                if not LABEL_NAME.fullmatch(name) or name.startswith("__"):
                    raise ValueError(f"label name {name!r} of {fam.name}")
            text = ",".join(f'{name}="{escape_label_value(v)}"' for name, v in labels)
            out.append(f"{fam.name}{{{text}}} {format_value(value)}" if text
                       else f"{fam.name} {format_value(value)}")
    return "\n".join(out) + "\n"


# --- the families -------------------------------------------------------------------


def _keel(scrape: Scrape) -> list[Family]:
    info = Family("keel_info", "gauge", "keel's version and the slot it booted from (A or B; "
                                        "empty off a slot)")
    info.add(1, version=scrape.version, slot=scrape.slot or "")
    ok = Family("keel_scrape_collector_success", "gauge",
                "1 when the collector read its source in this scrape, 0 when it failed "
                "(history: no fresh point from keel history-daemon)")
    cake_ok = scrape.cake is not None and scrape.cake.error is None
    for name, good in zip(COLLECTORS, (scrape.wireguard is not None, cake_ok,
                                       scrape.point is not None), strict=True):
        ok.add(int(good), collector=name)
    return [info, ok]


def _wireguard(scrape: Scrape) -> list[Family]:
    sent = Family("wireguard_sent_bytes_total", "counter", "Bytes sent to the peer")
    received = Family("wireguard_received_bytes_total", "counter", "Bytes received from the peer")
    handshake = Family("wireguard_latest_handshake_seconds", "gauge",
                       "Unix time of the latest handshake with the peer (0: never)")
    for iface in scrape.wireguard or ():
        for peer in iface.peers:
            labels = {"interface": iface.name, "public_key": peer.public_key,
                      "allowed_ips": ",".join(peer.allowed_ips)}
            name = scrape.peer_names.get(peer.public_key)
            if name:
                labels["friendly_name"] = name
            sent.add(peer.tx_bytes, **labels)
            received.add(peer.rx_bytes, **labels)
            handshake.add(peer.latest_handshake, **labels)
    return [sent, received, handshake]


def _bytes_per_second(bits: float | None) -> float | None:
    return None if bits is None else bits / 8


def _cake(scrape: Scrape) -> list[Family]:
    fams = {
        "rate": Family("keel_cake_rate_bytes_per_second", "gauge",
                       "CAKE's shaping rate (absent: unlimited); direction up is egress, "
                       "down ingress (its IFB)"),
        "sent": Family("keel_cake_sent_bytes_total", "counter", "Bytes CAKE sent"),
        "drops": Family("keel_cake_drops_total", "counter", "Packets CAKE dropped"),
        "marks": Family("keel_cake_ecn_marks_total", "counter", "Packets CAKE marked (ECN CE)"),
        "backlog": Family("keel_cake_backlog_bytes", "gauge", "Bytes queued in CAKE now"),
        "adaptive": Family("keel_cake_adaptive_rate_bytes_per_second", "gauge",
                           "Adaptive CAKE's bounds of the rate: min, base and max"),
        "tin_sent": Family("keel_cake_tin_sent_packets_total", "counter",
                           "Packets a CAKE tin sent"),
        "tin_drops": Family("keel_cake_tin_drops_total", "counter", "Packets a CAKE tin dropped"),
        "tin_marks": Family("keel_cake_tin_ecn_marks_total", "counter",
                            "Packets a CAKE tin marked (ECN CE)"),
        "tin_backlog": Family("keel_cake_tin_backlog_bytes", "gauge",
                              "Bytes queued in a CAKE tin now"),
        "tin_peak": Family("keel_cake_tin_peak_delay_seconds", "gauge",
                           "A CAKE tin's peak queueing delay (CAKE's own, decaying)"),
        "tin_avg": Family("keel_cake_tin_avg_delay_seconds", "gauge",
                          "A CAKE tin's average queueing delay"),
    }
    snap = scrape.cake
    for d in snap.directions if snap is not None and snap.error is None else ():
        at = {"interface": d.dev, "direction": d.way}
        fams["rate"].add(_bytes_per_second(d.rate_bps), **at)
        fams["sent"].add(d.sent_bytes, **at)
        fams["drops"].add(d.drops, **at)
        fams["marks"].add(d.ecn_marks, **at)
        fams["backlog"].add(d.backlog_bytes, **at)
        if d.adaptive is not None:
            for bound, bps in (("min", d.adaptive.min_bps), ("base", d.adaptive.base_bps),
                               ("max", d.adaptive.max_bps)):
                fams["adaptive"].add(_bytes_per_second(bps), **at, bound=bound)
        for tin in d.tins:
            t = {**at, "tin": tin.name}
            fams["tin_sent"].add(tin.packets, **t)
            fams["tin_drops"].add(tin.drops, **t)
            fams["tin_marks"].add(tin.ecn_marks, **t)
            fams["tin_backlog"].add(tin.backlog_bytes, **t)
            fams["tin_peak"].add(tin.peak_delay_ms / 1000, **t)
            fams["tin_avg"].add(tin.avg_delay_ms / 1000, **t)
    return list(fams.values())


def _seconds(ms: float | None) -> float | None:
    return None if ms is None else ms / 1000


def _history(scrape: Scrape) -> list[Family]:
    about = "over the history's latest interval (10 s)"
    p50 = Family("keel_latency_p50_seconds", "gauge", f"Median round trip of the probes, {about}; "
                                                      "path tunnel is through it, outside to "
                                                      "the peer beside it")
    p95 = Family("keel_latency_p95_seconds", "gauge", f"95th percentile round trip, {about}")
    worst = Family("keel_latency_max_seconds", "gauge", f"Slowest round trip, {about}")
    loss = Family("keel_latency_loss_ratio", "gauge", f"Share of the probes lost (0..1), {about}")
    stall = Family("keel_stall_worst_wakeup_seconds", "gauge",
                   f"The stall meter's worst wake-up delay, {about}")
    cpu = Family("keel_tunnel_cpu_cores", "gauge",
                 f"The tunnel's CPU cost in cores (1 = one core busy), {about}")
    when = Family("keel_history_point_timestamp_seconds", "gauge",
                  "Unix time of the end of the history's latest interval")
    verdict = Family("keel_verdict", "gauge",
                     "1 for each cause the verdict names now (what limits latency)")
    point = scrape.point
    if point is not None:
        for path in PATHS:
            lat = point.latency.get(path)
            if lat is None:
                continue
            p50.add(_seconds(lat.p50_ms), path=path)
            p95.add(_seconds(lat.p95_ms), path=path)
            worst.add(_seconds(lat.max_ms), path=path)
            loss.add(lat.loss, path=path)
        stall.add(_seconds(point.stall_worst_ms))
        cpu.add(point.tunnel_cpu_cores)
        when.add(point.t)
        named = (scrape.verdicts if scrape.verdicts is not None
                 else tuple((cause, "") for cause in point.causes))
        for cause, severity in dict(named).items():  # each cause once
            verdict.add(1, cause=cause, severity=severity)
    return [p50, p95, worst, loss, stall, cpu, when, verdict]


def _fleet(scrape: Scrape) -> list[Family]:
    """A hub's edges, each labelled edge="NAME" (one Prometheus scraping each
    hub watches every site); nothing on a router without edges."""
    if not scrape.edges:
        return []
    about = "as the hub's last poll of its edges through the tunnel found it"
    up = Family("keel_fleet_edge_up", "gauge", f"1 when the edge answered, 0 when not, {about}")
    info = Family("keel_fleet_edge_info", "gauge", "The edge's keel version and booted slot")
    hs = Family("keel_fleet_edge_handshake_age_seconds", "gauge",
                "Seconds since the hub's last WireGuard handshake with the edge")
    p95 = Family("keel_fleet_edge_latency_p95_seconds", "gauge",
                 "95th percentile round trip over the edge's latest 10 s; path tunnel is "
                 "through it, outside beside it")
    day = Family("keel_fleet_edge_latency_day_p95_seconds", "gauge",
                 "The worst 95th percentile through the tunnel over the edge's last 24 h")
    loss = Family("keel_fleet_edge_loss_ratio", "gauge",
                  "Share of the edge's tunnel probes lost (0..1) over its latest 10 s")
    rate = Family("keel_fleet_edge_cake_rate_bytes_per_second", "gauge",
                  "The edge's CAKE rate per direction (up: egress, down: ingress)")
    verdict = Family("keel_fleet_edge_verdict", "gauge",
                     "1 for each cause the edge's verdict names now")
    polled = Family("keel_fleet_poll_timestamp_seconds", "gauge",
                    "Unix time of the hub's last poll of the edge")
    for e in scrape.edges:
        up.add(int(e.status is not None), edge=e.name)
        hs.add(e.handshake_age_s, edge=e.name)
        polled.add(e.polled_at or None, edge=e.name)
        st = e.status
        if st is None:
            continue
        info.add(1, edge=e.name, version=st.version, slot=st.slot or "")
        p95.add(_seconds(st.tunnel_p95_ms), edge=e.name, path="tunnel")
        p95.add(_seconds(st.outside_p95_ms), edge=e.name, path="outside")
        day.add(_seconds(st.day_p95_ms), edge=e.name)
        loss.add(st.loss, edge=e.name)
        for direction, kbit in (("up", st.cake_up_kbit), ("down", st.cake_down_kbit)):
            rate.add(None if kbit is None else kbit * 1000 / 8, edge=e.name,
                     direction=direction)
        for cause in st.causes:
            verdict.add(1, edge=e.name, cause=cause)
    return [up, info, hs, p95, day, loss, rate, verdict, polled]


def render(scrape: Scrape) -> str:
    """The whole exposition of one scrape."""
    return render_families([*_keel(scrape), *_wireguard(scrape), *_cake(scrape),
                            *_history(scrape), *_fleet(scrape)])
