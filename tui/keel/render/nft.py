"""The nftables ruleset: one atomic file (`nft -f`), one `inet` table for
IPv4 and IPv6, stateful, default-deny inbound on the WAN, forward LAN -> WAN
and LAN -> tunnel, NAT (IPv4 only) out of the WAN; what comes in by the WAN
claiming an inside source is dropped first (the `spoofed` chain).

IPv6 has no NAT: what leaves keeps its address, and nothing hides the LAN's
hosts, so inbound IPv6 to them is closed but for the replies
(established/related), what a [[forward]] opens, and the ICMPv6 that RFC 4890
says a firewall must pass (its errors, echo). ICMPv6 to the router itself is
accepted only as RFC 4890 section 4.4 says for a router: errors, echo
(rate-limited on the WAN, like IPv4's, with `firewall.ping_on_wan`), neighbour
discovery from the link itself (hop limit 255, RFC 4861) and MLD from
link-local sources (RFC 3810); the rest is dropped.

The pairing port has a place of its own that the ruleset always has: the
set `inet keel pairing` (TCP ports, `flags timeout`) and one rule accepting
those ports on the WAN. The set is empty but while `keel pair` waits on the
hub; it then holds one element with a kernel timeout, so the port closes by
itself even if keel is killed. `keel pair` adds and deletes only that
element (`pairing_open`, `pairing_close`); the ruleset is never reloaded
for it.

The Prometheus endpoint ([metrics], keel metrics-serve) is reached from the
LAN by the LAN's own accept, from the tunnel by a rule of its own while it is
enabled, and from the WAN only with metrics.on_wan."""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable, Sequence

from keel import ports
from keel.adaptive import wire
from keel.model import Forward, RouterModel
from keel.render.wireguard import FORWARD_MARK, fleet_addresses, hub_address

IPERF3_PORT = ports.IPERF3
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

# ICMPv6 (RFC 4890). The error messages: accepted in input and forward before
# conntrack's `invalid` verdict, which is what an error quoting a packet that
# conntrack does not know (an expired UDP flow) gets; RFC 4890 4.3.1 and 4.4.1:
# these must not be dropped (packet-too-big least of all: path MTU discovery
# is all IPv6 has, routers do not fragment), all their codes (4.3.2: the rest
# of time-exceeded's and parameter-problem's should not be dropped either)
ICMPV6_ERRORS = "destination-unreachable, packet-too-big, time-exceeded, parameter-problem"
# neighbour discovery (RFC 4861): routers' and neighbours' solicitations and
# advertisements (the WAN's SLAAC, the LAN hosts' router solicitations, address
# resolution on every link); a receiver must drop them unless their hop limit
# is 255, i.e. they were not forwarded, and so does this ruleset. Redirects are
# dropped (RFC 4890 4.4.4 leaves them to a policy: they are for hosts, and a
# router does not act on them; Linux ignores them with forwarding on); and so
# are inverse ND, SEND and multicast router discovery, which Linux does not
# implement
ICMPV6_NDP = "nd-router-solicit, nd-router-advert, nd-neighbor-solicit, nd-neighbor-advert"
# multicast listener discovery (RFC 2710, 3810): from link-local sources only
# (the RFCs' own rule); answering the WAN's queries keeps a snooping switch
# sending us the solicited-node groups that neighbour discovery needs
ICMPV6_MLD = ("mld-listener-query, mld-listener-report, mld-listener-done, "
              "mld2-listener-report")
LINK_LOCAL6 = "fe80::/10"
LOOPBACK4 = "127.0.0.0/8"
# echo requests to the router from its WAN (IPv4 and IPv6), when ping_on_wan
PING_LIMIT = "20/second"
# echo requests forwarded to hosts behind this router (IPv6 only: IPv4's LAN
# is behind NAT). Allowed, with OpenWrt fw4's limit, rather than closed:
# RFC 4890 4.3.1 lists echo among what must not be dropped in transit (it is
# how a path and a host are checked from outside). What it gives away, that a
# host is at an address, a scanner cannot get by sweeping a /64 (too wide),
# and whoever the host talks to sees that address anyway; its ports stay
# closed
FORWARD_PING_LIMIT = "1000/second"
# DHCPv6 (RFC 8415): a server or relay answers a client on its link, from its
# link-local address to the client's, port 547 to 546. The client's request
# goes to a multicast group, so conntrack cannot match the reply to it
DHCPV6_REPLY = (f"ip6 saddr {LINK_LOCAL6} ip6 daddr {LINK_LOCAL6} "
                "udp sport 547 udp dport 546")


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
    local IPv4 forwards), from anywhere to the WAN's own addresses only (a LAN
    host or an edge reaching the public address gets the same service:
    hairpin): a local address that is not the tunnel's, a LAN's or loopback's
    (the WAN's may come by DHCP: what is left of the router's own), so a
    forward of port 53 never takes the LAN's DNS queries to the router; on an
    edge, its LAN reaching the hub's public address is sent to the target in
    the LAN directly (inner forwards). An IPv6 forward has no DNAT: its
    target is reached by its own address."""
    wg = model.wireguard
    lines = []
    inside = [a.split("/")[0] for a in (wg.address if wg else ()) if ":" not in a]
    inside += [lan.address.split("/")[0] for lan in model.lans if ":" not in lan.address]
    # an IPv4 match in front of the counter: an IPv6 connection to the same
    # port (which no `dnat ip` changes) is not one of the forward's
    not_tunnel = f"ip daddr != {{ {', '.join([LOOPBACK4, *inside])} }} "
    hub = hub_address(wg) if wg else None
    lans = _set([lan.interface for lan in model.lans]) if model.lans else None
    for f in model.forwards:
        if f.family != 4:
            continue
        counter = f'counter name "{forward_counter(f)}"'
        for proto in f.protocols:
            if f.role in ("outer", "local"):
                lines.append(f"\t\tfib daddr type local {not_tunnel}{_ports(f, proto)} "
                             f"{counter} dnat ip to {f.target}")
            elif hub and lans:
                lines.append(f"\t\tiifname {lans} ip daddr {hub} {_ports(f, proto)} "
                             f"dnat ip to {f.target}")
    return lines


def _forward6_accept(forward: Forward, proto: str, model: RouterModel,
                     tun: str | None) -> str | None:
    """forward: an IPv6 forward's new connections, from where its clients
    come in to where its target is, to the target's own address and port(s)
    (no DNAT: the public port is the target's). Outer (the hub): from the WAN
    into the tunnel, towards the edge's /64 of the routed prefix. Inner (the
    edge): from the tunnel into the LAN; no connection mark, the replies leave
    by the route of their source (the LAN's /64 goes through the tunnel).
    Local: from the WAN into the LAN. None where this router lacks a side."""
    wans = _set([w.interface for w in model.wans]) if model.wans else None
    lans = _set([lan.interface for lan in model.lans]) if model.lans else None
    tunnel = f'"{tun}"' if tun else None
    sides = {"outer": (wans, tunnel), "inner": (tunnel, lans), "local": (wans, lans)}
    src, dst = sides.get(forward.role, (None, None))
    if not (src and dst):
        return None
    return (f"\t\tiifname {src} oifname {dst} ip6 daddr {forward.address} "
            f'{_ports(forward, proto)} ct state new counter name "{forward_counter(forward)}" '
            "accept")


def _forward_accepts(model: RouterModel, tun: str | None) -> list[str]:
    """forward: what a forward lets through. IPv4, outer and local: the
    DNATed connections to their target. IPv4, inner: new connections from
    the tunnel to the target, marked so that their replies go back through
    the tunnel (FORWARD_MARK), not out of this edge's WAN. IPv6: see
    _forward6_accept."""
    lines = []
    lans = _set([lan.interface for lan in model.lans]) if model.lans else None
    for f in model.forwards:
        for proto in f.protocols:
            if f.family == 6:
                line = _forward6_accept(f, proto, model, tun)
                lines += [line] if line else []
                continue
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
    """postrouting: an IPv4 forward's connection whose client sits on the
    side the target is reached by (hairpin: a LAN host, or an edge through
    the tunnel, to the public address) is masqueraded, or the target would
    answer the client directly and the client would drop it; and a forward
    with `snat = true` always, on its way into the tunnel. IPv4 only: IPv6
    has no NAT here, and a LAN host reaches an IPv6 target by its address."""
    v4 = [f for f in model.forwards if f.family == 4]
    if not v4:
        return []
    lines = []
    for f in v4:
        if f.snat and f.role == "outer" and tun:
            for proto in f.protocols:
                lines.append(f'\t\toifname "{tun}" ct status dnat ip daddr {f.address} '
                             f"{_ports(f, proto, target=True)} masquerade")
    sides = [lan.interface for lan in model.lans] + ([tun] if tun else [])
    for side in sides:
        lines.append(f'\t\tiifname "{side}" oifname "{side}" meta nfproto ipv4 '
                     "ct status dnat masquerade")
    return lines


def tunnel_sources(model: RouterModel) -> tuple[list[str], list[str]]:
    """(IPv4, IPv6) prefixes, merged, that only ever come from inside the
    tunnel: its own networks (wireguard.address), what its peers may send
    from (allowed_ips, but a default route: route = "all" and an inner
    forward's hub take any source), what it routes (route = "prefixes"), and
    a hub's routed IPv6 prefix."""
    wg = model.wireguard
    if wg is None:
        return [], []
    texts: list[str] = [str(ipaddress.ip_interface(a).network) for a in wg.address]
    texts += [a for p in wg.peer for a in p.allowed_ips]
    texts += list(wg.prefixes) if wg.route == "prefixes" else []
    texts += [model.ipv6.routed_prefix] if model.ipv6.routed_prefix else []
    nets = [ipaddress.ip_network(t, strict=False) for t in texts]
    nets = [n for n in nets if n.prefixlen > 0]

    def merged(version: int) -> list[str]:
        same: Iterable = [n for n in nets if n.version == version]
        return [str(n) for n in ipaddress.collapse_addresses(same)]
    return merged(4), merged(6)


def _spoofed(model: RouterModel, tun: str | None) -> list[str]:
    """prerouting, before conntrack (priority raw): a packet that comes in
    by the WAN claiming a source that lives inside, in either family, is
    dropped (anti-spoofing; keel sets no rp_filter): one of this router's
    own addresses; a LAN's (where the route to the source goes: the static
    subnets and a /64 delegated by the WAN alike; not link-local, which every
    link has); the tunnel's (tunnel_sources). WireGuard's own port is left
    to WireGuard, which authenticates every packet (the hub's endpoint may
    lie inside what the tunnel routes). A host on the WAN's segment spoofing
    the hub's tunnel address thus never reaches the adaptive daemon."""
    wans = [w.interface for w in model.wans]
    if not wans:
        return []
    lans = [lan.interface for lan in model.lans]
    lines = ["	chain spoofed {",
             "		type filter hook prerouting priority raw; policy accept;",
             f"		iifname != {_set(wans)} return",
             "		fib saddr type local drop"]
    if lans:
        lines += [f"		meta nfproto ipv4 fib saddr oifname {_set(lans)} drop",
                  f"		ip6 saddr != {LINK_LOCAL6} fib saddr oifname {_set(lans)} drop"]
    v4, v6 = tunnel_sources(model)
    if tun and model.wireguard and (v4 or v6):
        lines.append(f"		udp dport {model.wireguard.listen_port} return")
        lines += [f"		ip saddr {{ {', '.join(v4)} }} drop"] if v4 else []
        lines += [f"		ip6 saddr {{ {', '.join(v6)} }} drop"] if v6 else []
    return [*lines, "	}", ""]


def _icmpv6_input(model: RouterModel, tun: str | None) -> list[str]:
    """input, after loopback: the ICMPv6 the router itself takes (RFC 4890
    4.4; the errors come before `ct state invalid`, in render_ruleset). The
    rest of ICMPv6 is dropped here, from every side: router renumbering, node
    information, redirects, unassigned types, unsolicited replies, echo
    requests over the WAN's limit (the LAN's accept below takes no ICMPv6)."""
    inside = [lan.interface for lan in model.lans] + ([tun] if tun else [])
    lines = [f"\t\ticmpv6 type {{ {ICMPV6_NDP} }} ip6 hoplimit 255 accept",
             f"\t\tip6 saddr {LINK_LOCAL6} icmpv6 type {{ {ICMPV6_MLD} }} accept"]
    if inside:
        lines.append(f"\t\tiifname {_set(inside)} icmpv6 type echo-request accept")
    if model.wans and model.firewall.ping_on_wan:
        lines.append(f"\t\tiifname {_set([w.interface for w in model.wans])} icmpv6 type "
                     f"echo-request limit rate {PING_LIMIT} accept")
    return [*lines, "\t\tmeta l4proto ipv6-icmp drop"]


def _icmpv6_forward(model: RouterModel, tun: str | None) -> list[str]:
    """forward: echo requests to the hosts behind this router (its LANs; on
    the hub, the routed prefix through the tunnel), limited (see
    FORWARD_PING_LIMIT); then any other ICMPv6 that is new is dropped (what
    conntrack lets be new: node information queries, RFC 4890 4.3.5). The
    errors come before `ct state invalid` (render_ruleset); echo from the
    LAN outwards is the LAN's accept below."""
    lines = []
    if model.lans:
        lines.append(f"\t\toifname {_set([lan.interface for lan in model.lans])} icmpv6 type "
                     f"echo-request limit rate {FORWARD_PING_LIMIT} accept")
    if tun and model.ipv6.routed_prefix:
        lines.append(f'\t\toifname "{tun}" ip6 daddr {model.ipv6.routed_prefix} icmpv6 type '
                     f"echo-request limit rate {FORWARD_PING_LIMIT} accept")
    return [*lines, "\t\ticmpv6 type != echo-request drop"]


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
        *_spoofed(model, tun),
        "\tchain input {",
        "\t\ttype filter hook input priority filter; policy drop;",
        "\t\tct state established,related accept",
        f"\t\ticmpv6 type {{ {ICMPV6_ERRORS} }} accept",
        "\t\tct state invalid drop",
        '\t\tiif "lo" accept',
        *_icmpv6_input(model, tun),
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
        if model.metrics.enabled:
            # the Prometheus endpoint (keel metrics-serve); the LAN's accept
            # above takes it from the LAN already
            lines.append(f'\t\tiifname "{tun}" tcp dport {model.metrics.port} accept')
        if fleet := fleet_addresses(model):
            # the fleet channel (keel fleet agent): from the hub's tunnel address only
            family = "ip6" if ":" in fleet[0] else "ip"
            lines.append(f'\t\tiifname "{tun}" {family} saddr {fleet[0]} '
                         f"tcp dport {ports.FLEET_TCP} accept")
    if wans:
        w = _set(wans)
        if fw.ping_on_wan:
            lines.append(f"\t\tiifname {w} icmp type {{ echo-request, destination-unreachable, "
                         f"time-exceeded }} limit rate {PING_LIMIT} accept")
        if tun and model.wireguard:
            lines.append(f"\t\tiifname {w} udp dport {model.wireguard.listen_port} accept")
        if fw.ssh_on_wan:
            lines.append(f"\t\tiifname {w} tcp dport 22 accept")
        lines.append(f"\t\tiifname {w} tcp dport @{PAIRING_SET} accept")
        if model.metrics.enabled and model.metrics.on_wan:
            lines.append(f"\t\tiifname {w} tcp dport {model.metrics.port} accept")
        for port in fw.open_tcp:
            lines.append(f"\t\tiifname {w} tcp dport {port} accept")
        for port in fw.open_udp:
            lines.append(f"\t\tiifname {w} udp dport {port} accept")
        lines.append(f"\t\tiifname {w} udp dport 68 udp sport 67 accept")
    auto6 = [w.interface for w in model.wans if w.ipv6 == "auto"]
    if auto6:
        # the WAN's DHCPv6 client (prefix delegation): its server's replies
        lines.append(f"\t\tiifname {_set(auto6)} {DHCPV6_REPLY} accept")
    lines += [
        "\t}",
        "",
        "\tchain forward {",
        "\t\ttype filter hook forward priority filter; policy drop;",
        "\t\tct state established,related accept",
        f"\t\ticmpv6 type {{ {ICMPV6_ERRORS} }} accept",
        "\t\tct state invalid drop",
    ]
    if tun:
        # TCP inside the tunnel must fit its smaller MTU
        lines.append(f'\t\toifname "{tun}" tcp flags syn tcp option maxseg size set rt mtu')
        lines.append(f'\t\tiifname "{tun}" tcp flags syn tcp option maxseg size set rt mtu')
    lines += _icmpv6_forward(model, tun)
    # both families: out of the LAN to the WAN and into the tunnel; on the hub,
    # from the tunnel out of the WAN (the edges' IPv4, NATed below, and their
    # /64s of the routed prefix, as they are). Nothing new the other way but
    # what the forwards and the ICMPv6 above let in
    if lans and wans:
        lines.append(f"\t\tiifname {_set(lans)} oifname {_set(wans)} accept")
    if lans and tun:
        lines.append(f'\t\tiifname {_set(lans)} oifname "{tun}" accept')
    if tun and wans and fw.forward_tunnel_to_wan:
        lines.append(f'\t\tiifname "{tun}" oifname {_set(wans)} accept')
    elif tun and wans and model.ipv6.routed_prefix:
        # the routed prefix is there for the edges' IPv6 to reach the internet
        # through the hub: its /64s go out without forward_tunnel_to_wan (which
        # is about the edges' IPv4, NATed)
        lines.append(f'\t\tiifname "{tun}" oifname {_set(wans)} '
                     f"ip6 saddr {model.ipv6.routed_prefix} accept")
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
    inner = [f for f in model.forwards if f.role == "inner" and f.family == 4]
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
        # masquerade: IPv4 only (in an inet table a bare masquerade would
        # take IPv6 too: NAT66, hiding the LAN's and the edges' own addresses)
        lines += [
            "",
            "\tchain postrouting {",
            "\t\ttype nat hook postrouting priority srcnat; policy accept;",
            *snat,
            *([f"\t\toifname {_set(nat_out)} meta nfproto ipv4 masquerade"] if nat_out else []),
            "\t}",
        ]
    lines.append("}")
    return "\n".join(lines) + "\n"
