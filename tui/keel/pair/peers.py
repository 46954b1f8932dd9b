"""`keel peers`: the tunnel's peers as the config names them, with what
WireGuard says of each now (endpoint, last handshake)."""

from __future__ import annotations

import ipaddress
import time
from dataclasses import dataclass

from keel.config.schema import Config
from keel.parse.wgdump import WgInterface
from keel.shown import shown


@dataclass(frozen=True)
class PeerRow:
    name: str
    tunnel: str  # the peer's address inside the tunnel (its first /32 or /128)
    endpoint: str  # as WireGuard saw it last, else as configured, else "-"
    handshake_age_s: float | None  # None: never
    routes: tuple[str, ...]  # its other allowed IPs (a LAN)
    public_key: str


def peer_rows(config: Config, live: dict[str, WgInterface], now: float) -> list[PeerRow]:
    wg = config.wireguard
    seen = {p.public_key: p for iface in live.values() if iface.name == wg.interface
            for p in iface.peers}
    own = [ipaddress.ip_interface(a).network for a in wg.address]
    rows = []
    for i, peer in enumerate(wg.peer):
        hosts = [a for a in peer.allowed_ips
                 if ipaddress.ip_network(a).prefixlen == ipaddress.ip_network(a).max_prefixlen]
        state = seen.get(peer.public_key)
        rows.append(PeerRow(
            name=peer.name or f"peer[{i}]",
            tunnel=hosts[0].split("/")[0] if hosts else "-",
            endpoint=(state.endpoint if state and state.endpoint else peer.endpoint or "-"),
            handshake_age_s=state.handshake_age(now) if state else None,
            # what else goes to it: not the tunnel's own prefix, which pairing
            # spells out in pieces around the hub's address
            routes=tuple(a for a in peer.allowed_ips if a not in hosts[:1] and not any(
                ipaddress.ip_network(a).version == n.version
                and ipaddress.ip_network(a).subnet_of(n) for n in own)),
            public_key=peer.public_key))
    return rows


def age(seconds: float | None) -> str:
    if seconds is None:
        return "never"
    if seconds < 120:
        return f"{seconds:.0f} s ago"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min ago"
    return f"{seconds / 3600:.0f} h ago"


def cells(row: PeerRow) -> tuple[str, str, str, str, str]:
    """A row as text to show: the name and endpoint came from a peer (through
    pairing, or WireGuard's view of where its packets come from), so every
    cell is escaped (keel.shown) for the terminal."""
    return (shown(row.name, 64), shown(row.tunnel), shown(row.endpoint, 64),
            age(row.handshake_age_s), shown(", ".join(row.routes) or "-"))


def table(rows: list[PeerRow]) -> list[str]:
    head = ("name", "tunnel", "endpoint", "last handshake", "routes")
    body = [cells(r) for r in rows]
    widths = [max(len(row[k]) for row in (head, *body)) for k in range(len(head))]
    return ["  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
            for row in (head, *body)]


def read_peer_rows() -> tuple[list[PeerRow], str]:
    """The rows of the config in force and the tunnel now; ([], why) when
    the config cannot be read."""
    from keel.apply.errors import InvalidConfig
    from keel.model.reading import config_in_force, read_loaded
    from keel.system.source import SourceError
    from keel.system.wireguard import read_wireguard

    try:
        config = read_loaded(config_in_force()).config
    except InvalidConfig as err:
        return [], f"the config in force is invalid: {err.summary()}"
    try:
        live = read_wireguard()
    except SourceError:
        live = {}
    return peer_rows(config, live, time.time()), ""
