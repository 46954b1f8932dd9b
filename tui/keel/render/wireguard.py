"""The WireGuard interface's `wg syncconf` file. It holds the private key, so
it is written only to /run (tmpfs) with mode 0600 and never printed."""

from __future__ import annotations

from keel.model import WireGuard

FWMARK = 51820  # also the routing table of "route all through the tunnel"


def render_syncconf(tunnel: WireGuard, private_key: str) -> str:
    lines = ["[Interface]", f"PrivateKey = {private_key}", f"ListenPort = {tunnel.listen_port}"]
    if tunnel.route == "all":
        lines.append(f"FwMark = {FWMARK}")
    for peer in tunnel.peer:
        lines += ["", "[Peer]"] + ([f"# {peer.name}"] if peer.name else []) + [
            f"PublicKey = {peer.public_key}", f"AllowedIPs = {', '.join(peer.allowed_ips)}"]
        if peer.endpoint:
            lines.append(f"Endpoint = {peer.endpoint}")
        if peer.keepalive:
            lines.append(f"PersistentKeepalive = {peer.keepalive}")
    return "\n".join(lines) + "\n"


def route_commands(tunnel: WireGuard) -> list[list[str]]:
    """Routes through the tunnel: all traffic (wg-quick's fwmark scheme, so the
    tunnel's own packets still leave by the WAN; see `policy_rules`) or the
    listed prefixes. `ip route replace` is idempotent."""
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


def policy_rules(tunnel: WireGuard) -> list[tuple[str, ...]]:
    """`ip rule` selectors (priority first) for "route all through the tunnel"."""
    if tunnel.route != "all":
        return []
    table = str(FWMARK)
    return [("31999", "lookup", "main", "suppress_prefixlength", "0"),
            ("32000", "not", "from", "all", "fwmark", hex(FWMARK), "lookup", table)]
