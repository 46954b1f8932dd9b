"""The nftables ruleset: one atomic file (`nft -f`), stateful, default-deny
inbound on the WAN, forward LAN -> WAN and LAN -> tunnel, NAT out of the WAN.

The pairing port has a place of its own that the ruleset always has: the
set `inet keel pairing` (TCP ports, `flags timeout`) and one rule accepting
those ports on the WAN. The set is empty but while `keel pair` waits on the
hub; it then holds one element with a kernel timeout, so the port closes by
itself even if keel is killed. `keel pair` adds and deletes only that
element (`pairing_open`, `pairing_close`); the ruleset is never reloaded
for it."""

from __future__ import annotations

from collections.abc import Sequence

from keel.adaptive import wire
from keel.model import Forward, RouterModel
from keel.render.wireguard import FORWARD_MARK, hub_address

IPERF3_PORT = 5201
PROBE_PORT = wire.PORT
TABLE = ("inet", "keel")
PAIRING_SET = "pairing"
# the ruleset as loaded, without counters or set contents: what keel records
# right after loading its own, and compares with later (drift)
LIST_STATELESS = ("nft", "-s", "-t", "list", "ruleset")
LIST_PAIRING = ("nft", "-j", "list", "set", *TABLE, PAIRING_SET)
# the forwards' named counters (one per [[forward]]: forward_counter)
LIST_COUNTERS = ("nft", "-j", "list", "counters", "table", *TABLE)
# the longest kernel timeout `keel pair` gives the pairing port: a code waits
# 600 s at most, and the element outlives it by 15 s (keel.pair.port). An
# element without a timeout, or with a longer one, is not keel's: drift that
# `keel apply` removes (a reload) and `keel doctor` fails on
PAIRING_LONGEST_S = 600 + 15


def _set(names: list[str]) -> str:
    quoted = ", ".join(f'"{n}"' for n in names)
    return f"{{ {quoted} }}"


def pairing_open(port: int, timeout_s: int) -> list[str]:
    """argv: the pairing port open for `timeout_s` (one nft transaction: the
    set emptied of what a killed `keel pair` may have left, then the port)."""
    where = f"{TABLE[0]} {TABLE[1]} {PAIRING_SET}"
    return ["nft", f"flush set {where}; add element {where} "
                   f"{{ {int(port)} timeout {int(timeout_s)}s }}"]


def pairing_close(port: int) -> list[str]:
    """argv: that element deleted (nothing else)."""
    return ["nft", "delete", "element", *TABLE, PAIRING_SET, f"{{ {int(port)} }}"]


def _pairing_set(waiting: Sequence[tuple[int, int]]) -> list[str]:
    lines = [
        f"\tset {PAIRING_SET} {{",
        "\t\ttype inet_service",
        "\t\tflags timeout",
        '\t\tcomment "keel pair: the TCP port open on the WAN while a code waits"',
    ]
    if waiting:
        elements = ", ".join(f"{int(port)} timeout {max(1, int(left))}s"
                             for port, left in waiting)
        lines.append(f"\t\telements = {{ {elements} }}")
    return [*lines, "\t}", ""]


def forward_counter(forward: Forward) -> str:
    """The named counter of a forward: the connections it let in."""
    return f"fwd-{forward.name}"


def _ports(forward: Forward, proto: str, target: bool = False) -> str:
    return f"{proto} dport {forward.target_ports if target else forward.public}"


def _forward_counters(model: RouterModel) -> list[str]:
    lines = []
    for f in model.forwards:
        lines += [f"\tcounter {forward_counter(f)} {{",
                  f'\t\tcomment "keel forward {f.name}: {f.protocol} {f.public} -> '
                  f'{f.target}"', "\t}", ""]
    return lines


def _forward_dnat(model: RouterModel) -> list[str]:
    """prerouting: the hub's public port(s) DNATed to the target (outer and
    local forwards), from anywhere to any of this router's own addresses but
    its tunnel's (a LAN host or an edge reaching the public address gets the
    same service: hairpin); on an edge, its LAN reaching the hub's public
    address is sent to the target in the LAN directly (inner forwards)."""
    wg = model.wireguard
    lines = []
    tunnel_v4 = [a.split("/")[0] for a in (wg.address if wg else ()) if ":" not in a]
    not_tunnel = f"ip daddr != {{ {', '.join(tunnel_v4)} }} " if tunnel_v4 else ""
    hub = hub_address(wg) if wg else None
    lans = _set([lan.interface for lan in model.lans]) if model.lans else None
    for f in model.forwards:
        counter = f'counter name "{forward_counter(f)}"'
        for proto in f.protocols:
            if f.role in ("outer", "local"):
                lines.append(f"\t\tfib daddr type local {not_tunnel}{_ports(f, proto)} "
                             f"{counter} dnat ip to {f.target}")
            elif hub and lans:
                lines.append(f"\t\tiifname {lans} ip daddr {hub} {_ports(f, proto)} "
                             f"dnat ip to {f.target}")
    return lines


def _forward_accepts(model: RouterModel, tun: str | None) -> list[str]:
    """forward: what a forward lets through. Outer and local: the DNATed
    connections to their target. Inner: new connections from the tunnel to
    the target, marked so that their replies go back through the tunnel
    (FORWARD_MARK), not out of this edge's WAN."""
    lines = []
    lans = _set([lan.interface for lan in model.lans]) if model.lans else None
    for f in model.forwards:
        for proto in f.protocols:
            match = f"ip daddr {f.address} {_ports(f, proto, target=True)}"
            if f.role in ("outer", "local"):
                lines.append(f"\t\tct status dnat {match} accept")
            elif tun and lans:
                lines.append(f'\t\tiifname "{tun}" oifname {lans} {match} ct state new '
                             f'counter name "{forward_counter(f)}" '
                             f"ct mark set {FORWARD_MARK:#x} accept")
                # hairpin: the LAN to the hub's public address, sent here
                lines.append(f"\t\tiifname {lans} oifname {lans} ct status dnat {match} "
                             "accept")
    return lines


def _forward_snat(model: RouterModel, tun: str | None) -> list[str]:
    """postrouting: a forward's connection whose client sits on the side the
    target is reached by (hairpin: a LAN host, or an edge through the tunnel,
    to the public address) is masqueraded, or the target would answer the
    client directly and the client would drop it; and a forward with
    `snat = true` always, on its way into the tunnel."""
    if not model.forwards:
        return []
    lines = []
    for f in model.forwards:
        if f.snat and f.role == "outer" and tun:
            for proto in f.protocols:
                lines.append(f'\t\toifname "{tun}" ct status dnat ip daddr {f.address} '
                             f"{_ports(f, proto, target=True)} masquerade")
    sides = [lan.interface for lan in model.lans] + ([tun] if tun else [])
    for side in sides:
        lines.append(f'\t\tiifname "{side}" oifname "{side}" ct status dnat masquerade')
    return lines


def render_ruleset(model: RouterModel,
                   pairing: Sequence[tuple[int, int]] = ()) -> str:
    """The whole ruleset. `pairing`: (port, seconds left) of a code waiting
    now (`keel pair` on the hub), carried over a reload with what remains
    of its timeout; the rest of the text does not depend on it."""
    wans = [w.interface for w in model.wans]
    lans = [lan.interface for lan in model.lans]
    tun = model.wireguard.interface if model.wireguard else None
    fw = model.firewall
    lines = [
        "#!/usr/sbin/nft -f",
        "# keel: generated by `keel apply`; edit /data/keel/keel.toml instead.",
        "flush ruleset",
        "",
        "table inet keel {",
        *_pairing_set(pairing),
        *_forward_counters(model),
        "\tchain input {",
        "\t\ttype filter hook input priority filter; policy drop;",
        "\t\tct state established,related accept",
        "\t\tct state invalid drop",
        '\t\tiif "lo" accept',
        "\t\tmeta l4proto ipv6-icmp accept",
    ]
    if lans:
        lines.append(f"\t\tiifname {_set(lans)} accept")
    if tun and model.wireguard:
        if model.selftest.iperf3_server:
            lines.append(f'\t\tiifname "{tun}" tcp dport {IPERF3_PORT} accept')
            lines.append(f'\t\tiifname "{tun}" udp dport {IPERF3_PORT} accept')
        lines.append(f'\t\tiifname "{tun}" meta l4proto icmp accept')
        # keel's delay probes (keel.adaptive.wire): answered from the tunnel only
        lines.append(f'\t\tiifname "{tun}" udp dport {PROBE_PORT} accept')
    if wans:
        w = _set(wans)
        if fw.ping_on_wan:
            lines.append(f"\t\tiifname {w} icmp type {{ echo-request, destination-unreachable, "
                         "time-exceeded } limit rate 20/second accept")
        if tun and model.wireguard:
            lines.append(f"\t\tiifname {w} udp dport {model.wireguard.listen_port} accept")
        if fw.ssh_on_wan:
            lines.append(f"\t\tiifname {w} tcp dport 22 accept")
        lines.append(f"\t\tiifname {w} tcp dport @{PAIRING_SET} accept")
        for port in fw.open_tcp:
            lines.append(f"\t\tiifname {w} tcp dport {port} accept")
        for port in fw.open_udp:
            lines.append(f"\t\tiifname {w} udp dport {port} accept")
        lines.append(f"\t\tiifname {w} udp dport 68 udp sport 67 accept")
    lines += [
        "\t}",
        "",
        "\tchain forward {",
        "\t\ttype filter hook forward priority filter; policy drop;",
        "\t\tct state established,related accept",
        "\t\tct state invalid drop",
    ]
    if tun:
        # TCP inside the tunnel must fit its smaller MTU
        lines.append(f'\t\toifname "{tun}" tcp flags syn tcp option maxseg size set rt mtu')
        lines.append(f'\t\tiifname "{tun}" tcp flags syn tcp option maxseg size set rt mtu')
    if lans and wans:
        lines.append(f"\t\tiifname {_set(lans)} oifname {_set(wans)} accept")
    if lans and tun:
        lines.append(f'\t\tiifname {_set(lans)} oifname "{tun}" accept')
    if tun and wans and fw.forward_tunnel_to_wan:
        lines.append(f'\t\tiifname "{tun}" oifname {_set(wans)} accept')
    if tun and fw.forward_between_peers:
        lines.append(f'\t\tiifname "{tun}" oifname "{tun}" accept')
    lines += _forward_accepts(model, tun)
    lines += [
        "\t}",
        "",
        "\tchain output {",
        "\t\ttype filter hook output priority filter; policy accept;",
        "\t}",
    ]
    dnat = _forward_dnat(model)
    if dnat:
        lines += ["", "\tchain prerouting {",
                  "\t\ttype nat hook prerouting priority dstnat; policy accept;",
                  *dnat, "\t}"]
    inner = [f for f in model.forwards if f.role == "inner"]
    if inner and lans:
        # the replies of connections that came in through the tunnel: marked
        # for the routing rule that sends them back into it
        lines += ["", "\tchain replies {",
                  "\t\ttype filter hook prerouting priority mangle; policy accept;",
                  f"\t\tiifname {_set(lans)} ct mark {FORWARD_MARK:#x} "
                  f"meta mark set {FORWARD_MARK:#x}",
                  "\t}"]
    nat_out = wans if model.nat.masquerade_wan else []
    if tun and lans and model.nat.masquerade_tunnel:
        nat_out = [*nat_out, tun]
    snat = _forward_snat(model, tun)
    if nat_out or snat:
        lines += [
            "",
            "\tchain postrouting {",
            "\t\ttype nat hook postrouting priority srcnat; policy accept;",
            *snat,
            *([f"\t\toifname {_set(nat_out)} masquerade"] if nat_out else []),
            "\t}",
        ]
    lines.append("}")
    return "\n".join(lines) + "\n"
