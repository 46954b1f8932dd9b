"""The WireGuard interface's `wg syncconf` file. It holds the private key, so
it is written only to /run (tmpfs) with mode 0600 and never printed."""

from __future__ import annotations

import ipaddress
from collections.abc import Sequence

from keel.model import Forward, Peer, WireGuard

FWMARK = 51820  # also the routing table of "route all through the tunnel"
# an edge's inner port forwards: connections that came in through the tunnel
# carry this conntrack mark; their replies get it as a packet mark
# (keel.render.nft) and a rule sends them to this table, whose default
# route is the tunnel (wg-quick's way), not out of the WAN
FORWARD_MARK = 51822
FORWARD_RULE_PRIORITY = "31990"
ANY_V4 = "0.0.0.0/0"


def _inner(forwards: Sequence[Forward]) -> bool:
    return any(f.role == "inner" for f in forwards)


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


def allowed_ips(tunnel: WireGuard, peer: Peer,
                forwards: Sequence[Forward] = ()) -> tuple[str, ...]:
    """A peer's AllowedIPs. With inner forwards, the hub's takes any IPv4
    source too: the forwarded connections come with the client's address
    (routes stay keel's own: wireguard.route decides what goes in)."""
    if _inner(forwards) and peer is hub_peer(tunnel) and ANY_V4 not in peer.allowed_ips:
        return (*peer.allowed_ips, ANY_V4)
    return peer.allowed_ips


def render_syncconf(tunnel: WireGuard, private_key: str,
                    forwards: Sequence[Forward] = ()) -> str:
    lines = ["[Interface]", f"PrivateKey = {private_key}", f"ListenPort = {tunnel.listen_port}"]
    if tunnel.route == "all":
        lines.append(f"FwMark = {FWMARK}")
    for peer in tunnel.peer:
        lines += ["", "[Peer]"] + ([f"# {peer.name}"] if peer.name else []) + [
            f"PublicKey = {peer.public_key}",
            f"AllowedIPs = {', '.join(allowed_ips(tunnel, peer, forwards))}"]
        if peer.endpoint:
            lines.append(f"Endpoint = {peer.endpoint}")
        if peer.keepalive:
            lines.append(f"PersistentKeepalive = {peer.keepalive}")
    return "\n".join(lines) + "\n"


def route_commands(tunnel: WireGuard, forwards: Sequence[Forward] = ()) -> list[list[str]]:
    """Routes through the tunnel: all traffic (wg-quick's fwmark scheme, so the
    tunnel's own packets still leave by the WAN; see `policy_rules`) or the
    listed prefixes; and the inner forwards' replies (their table's default).
    `ip route replace` is idempotent."""
    dev = tunnel.interface
    back = ([["ip", "route", "replace", "default", "dev", dev, "table", str(FORWARD_MARK)]]
            if _inner(forwards) else [])
    return back + _routes(tunnel)


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
