"""The WireGuard interface's `wg syncconf` file. It holds the private key, so
it is written only to /run (tmpfs) with mode 0600 and never printed."""

from __future__ import annotations

import ipaddress
from collections.abc import Sequence

from keel.model import Forward, Peer, RouterModel, WireGuard

FWMARK = 51820  # also the routing table of "route all through the tunnel"
# an edge's inner port forwards: connections that came in through the tunnel
# carry this conntrack mark; their replies get it as a packet mark
# (keel.render.nft) and a rule sends them to this table, whose default
# route is the tunnel (wg-quick's way), not out of the WAN
FORWARD_MARK = 51822
FORWARD_RULE_PRIORITY = "31990"
ANY_V4 = "0.0.0.0/0"
ANY_V6 = "::/0"
# an edge's LAN /64 from the hub's routed prefix (lan.address6): what comes
# from it goes into the tunnel whatever the WAN has. Two IPv6 rules per /64,
# wg-quick's pattern: the main table without its default route first (the
# LANs, the tunnel's own subnet, the hub's routes stay as they are), then
# this table, whose one route is the default through the tunnel.
LAN6_TABLE = 51823
LAN6_MAIN_PRIORITY = "31980"  # from <64> lookup main suppress_prefixlength 0
LAN6_RULE_PRIORITY = "31981"  # from <64> lookup LAN6_TABLE


def _inner(forwards: Sequence[Forward]) -> bool:
    """An IPv4 forward whose target is behind this edge: its replies need the
    mark, the rule and 0.0.0.0/0 from the hub (an IPv6 one is not translated
    and its replies go back by the LAN /64's own rule)."""
    return any(f.role == "inner" and f.family == 4 for f in forwards)


def hub_peer(tunnel: WireGuard) -> Peer | None:
    """The peer an edge reaches (the one with an endpoint): its hub."""
    return next((p for p in tunnel.peer if p.endpoint), None)


def hub_address(tunnel: WireGuard) -> str | None:
    """The hub's public IPv4 address, when its endpoint gives one literally
    (an edge's LAN reaching it is sent to a forward's target directly)."""
    peer = hub_peer(tunnel)
    if peer is None or peer.endpoint is None or peer.endpoint.startswith("["):
        return None
    host = peer.endpoint.rsplit(":", 1)[0]
    try:
        return str(ipaddress.IPv4Address(host))
    except ValueError:
        return None


def fleet_addresses(model: RouterModel) -> tuple[str, str] | None:
    """(the hub's tunnel address, this router's) when the config names a hub:
    the hub peer's first single address inside the tunnel's prefix, and this
    router's tunnel address of that prefix; None otherwise."""
    wg = model.wireguard
    if wg is None:
        return None
    hub = next((p for p in wg.peer if p.fleet == "hub"), None)
    if hub is None:
        return None
    for text in wg.address:
        own = ipaddress.ip_interface(text)
        for allowed in hub.allowed_ips:
            net = ipaddress.ip_network(allowed)
            if net.prefixlen == net.max_prefixlen and net.version == own.version \
                    and net.network_address in own.network and net.network_address != own.ip:
                return str(net.network_address), str(own.ip)
    return None


def allowed_ips(tunnel: WireGuard, peer: Peer, forwards: Sequence[Forward] = (),
                lan6: Sequence[str] = ()) -> tuple[str, ...]:
    """A peer's AllowedIPs. With inner forwards, the hub's takes any IPv4
    source too: the forwarded connections come with the client's address
    (routes stay keel's own: wireguard.route decides what goes in). With a
    LAN /64 routed through the tunnel (`lan6`, keel.render.ipv6.
    lan_tunnel_prefixes), the hub's takes any IPv6 address (::/0): that
    LAN's traffic to the internet goes to it and the replies come from it."""
    out = peer.allowed_ips
    if peer is hub_peer(tunnel):
        if _inner(forwards) and ANY_V4 not in out:
            out = (*out, ANY_V4)
        if lan6 and ANY_V6 not in out:
            out = (*out, ANY_V6)
    return out


def render_syncconf(tunnel: WireGuard, private_key: str,
                    forwards: Sequence[Forward] = (), lan6: Sequence[str] = ()) -> str:
    lines = ["[Interface]", f"PrivateKey = {private_key}", f"ListenPort = {tunnel.listen_port}"]
    if tunnel.route == "all":
        lines.append(f"FwMark = {FWMARK}")
    for peer in tunnel.peer:
        lines += ["", "[Peer]"] + ([f"# {peer.name}"] if peer.name else []) + [
            f"PublicKey = {peer.public_key}",
            f"AllowedIPs = {', '.join(allowed_ips(tunnel, peer, forwards, lan6))}"]
        if peer.endpoint:
            lines.append(f"Endpoint = {peer.endpoint}")
        if peer.keepalive:
            lines.append(f"PersistentKeepalive = {peer.keepalive}")
    return "\n".join(lines) + "\n"


def route_commands(tunnel: WireGuard, forwards: Sequence[Forward] = (),
                   lan6: Sequence[str] = (), peers6: Sequence[str] = ()) -> list[list[str]]:
    """Routes through the tunnel: all traffic (wg-quick's fwmark scheme, so the
    tunnel's own packets still leave by the WAN; see `policy_rules`) or the
    listed prefixes; and the inner forwards' replies (their table's default);
    an edge's LAN /64s (`lan6`: LAN6_TABLE's default, see `lan6_rules`); a
    hub's peers' prefixes of its routed IPv6 prefix (`peers6`, keel.render.
    ipv6.routed_peer_prefixes). `ip route replace` is idempotent."""
    dev = tunnel.interface
    back = ([["ip", "route", "replace", "default", "dev", dev, "table", str(FORWARD_MARK)]]
            if _inner(forwards) else [])
    if lan6:
        back.append(["ip", "-6", "route", "replace", "default", "dev", dev,
                     "table", str(LAN6_TABLE)])
    own = set(main_table_prefixes(tunnel))
    hub = [["ip", "-6", "route", "replace", p, "dev", dev] for p in peers6 if p not in own]
    return back + _routes(tunnel) + hub


def main_table_prefixes(tunnel: WireGuard, peers6: Sequence[str] = ()) -> list[str]:
    """The prefixes keel routes through the tunnel in the main table: the
    listed ones (route = "prefixes") and a hub's peers' IPv6 prefixes; any
    other route there through the tunnel is stale."""
    listed = ([str(ipaddress.ip_network(p)) for p in tunnel.prefixes]
              if tunnel.route == "prefixes" else [])
    return listed + [str(ipaddress.ip_network(p)) for p in peers6 if p not in listed]


def _routes(tunnel: WireGuard) -> list[list[str]]:
    dev = tunnel.interface
    if tunnel.route == "all":
        table = str(FWMARK)
        return [
            ["ip", "route", "replace", "default", "dev", dev, "table", table],
            ["ip", "-6", "route", "replace", "default", "dev", dev, "table", table],
        ]
    if tunnel.route != "prefixes":  # "none": the tunnel's own subnet only
        return []
    cmds = []
    for prefix in tunnel.prefixes:
        family = ["-6"] if ":" in prefix else []
        cmds.append(["ip", *family, "route", "replace", prefix, "dev", dev])
    return cmds


def policy_rules(tunnel: WireGuard, forwards: Sequence[Forward] = ()
                 ) -> list[tuple[str, ...]]:
    """`ip rule` selectors (priority first) for "route all through the tunnel",
    and for the inner forwards' replies."""
    rules = ([(FORWARD_RULE_PRIORITY, "fwmark", hex(FORWARD_MARK), "lookup",
               str(FORWARD_MARK))] if _inner(forwards) else [])
    if tunnel.route != "all":
        return rules
    table = str(FWMARK)
    return [*rules, ("31999", "lookup", "main", "suppress_prefixlength", "0"),
            ("32000", "not", "from", "all", "fwmark", hex(FWMARK), "lookup", table)]


def lan6_rules(lan6: Sequence[str]) -> list[tuple[str, ...]]:
    """The IPv6 rules (`ip -6 rule`, priority first) that send what comes
    from an edge's LAN /64s into the tunnel (LAN6_TABLE)."""
    rules: list[tuple[str, ...]] = []
    for prefix in lan6:
        rules.append((LAN6_MAIN_PRIORITY, "from", prefix, "lookup", "main",
                      "suppress_prefixlength", "0"))
        rules.append((LAN6_RULE_PRIORITY, "from", prefix, "lookup", str(LAN6_TABLE)))
    return rules
