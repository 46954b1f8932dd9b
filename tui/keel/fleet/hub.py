"""The hub's side of the fleet: its edges (the peers with fleet = "edge"),
each asked through the tunnel for its status, and given the routes to the
others' LANs (keel.pair.settle.routes_for_edge, the rule pairing grants by).

An edge is asked on its tunnel address (its first single address inside
the tunnel's prefix) with a bound on the time: an edge that does not answer
is shown as such, with when it last did (kept on /data: `SEEN`). The edges
are asked side by side."""

from __future__ import annotations

import ipaddress
import json
import socket
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from keel.config.schema import Config
from keel.fleet import wire
from keel.pair.peers import PeerRow
from keel.ports import FLEET_TCP
from keel.shown import shown

ASK_TIMEOUT_S = 15.0  # connect, send, and the whole status reply
# routes: the edge answers once it has applied them (a revision, `keel apply`:
# seconds on a router, a minute or more on a starved or emulated one)
ROUTES_TIMEOUT_S = 300.0
SEEN = Path("/data/keel/fleet/seen.json")  # edge name -> when it last answered
MAX_SEEN_BYTES = 64 * 1024


@dataclass(frozen=True)
class Edge:
    name: str
    address: str  # its tunnel address, where its agent answers
    public_key: str


@dataclass(frozen=True)
class EdgeRow:
    """One edge as the hub sees it now: its status, or why there is none."""

    edge: Edge
    status: wire.Status | None
    error: str = ""  # why no status
    handshake_age_s: float | None = None  # None: never (the hub's WireGuard)
    last_seen: float | None = None  # when it last answered (this poll or an earlier)
    routes_due: tuple[str, ...] = ()  # what the hub gives it

    @property
    def routes_in_sync(self) -> bool | None:
        if self.status is None:
            return None
        return set(self.status.routes) == set(self.routes_due)

    def as_json(self, now: float) -> dict[str, Any]:
        return {"name": self.edge.name, "tunnel": self.edge.address,
                "answered": self.status is not None, "error": self.error,
                "handshake_age_s": self.handshake_age_s,
                "last_seen_age_s": None if self.last_seen is None
                else round(max(0.0, now - self.last_seen), 1),
                "routes_due": list(self.routes_due), "routes_in_sync": self.routes_in_sync,
                "status": self.status.as_json() if self.status else None}


def fleet_edges(config: Config) -> list[Edge]:
    """The hub's edges: peers with fleet = "edge" that have a single address
    inside the tunnel's prefix (where their agent listens)."""
    tunnels = [ipaddress.ip_interface(a).network for a in config.wireguard.address]
    out = []
    for i, peer in enumerate(config.wireguard.peer):
        if peer.fleet != "edge":
            continue
        for text in peer.allowed_ips:
            net = ipaddress.ip_network(text)
            if net.prefixlen == net.max_prefixlen and any(
                    net.version == t.version and net.subnet_of(t) for t in tunnels):  # type: ignore[arg-type]
                out.append(Edge(peer.name or f"peer[{i}]", str(net.network_address),
                                peer.public_key))
                break
    return out


def ask(address: str, request: bytes, timeout_s: float = ASK_TIMEOUT_S, port: int = FLEET_TCP,
        clock: Callable[[], float] = time.monotonic) -> bytes:
    """Send one request to the agent at `address` and read its one-line
    reply (at most MAX_REPLY bytes) within `timeout_s` in all. Raises
    OSError (no connection, or no whole reply in time) or WireError."""
    with socket.create_connection((address, port), timeout=timeout_s) as conn:
        conn.sendall(request)
        return read_reply(conn, timeout_s, clock)


def read_reply(conn: socket.socket, timeout_s: float,
               clock: Callable[[], float] = time.monotonic) -> bytes:
    """The agent's one-line reply (at most MAX_REPLY bytes) within
    `timeout_s`; OSError (none in time) or WireError."""
    deadline = clock() + timeout_s
    data = b""
    while b"\n" not in data:
        left = deadline - clock()
        if left <= 0:
            raise TimeoutError(f"no whole reply within {timeout_s:.0f} s")
        conn.settimeout(left)
        chunk = conn.recv(4096)
        if not chunk:
            break
        data += chunk
        if len(data) > wire.MAX_REPLY:
            raise wire.WireError(f"reply: longer than {wire.MAX_REPLY} bytes")
    end = data.find(b"\n")
    if end < 0:
        raise wire.WireError("reply: the edge closed before a whole line")
    return data[:end + 1]


def why(err: Exception) -> str:
    """An error from asking an edge, in a few words (no bytes of its reply)."""
    if isinstance(err, wire.WireError):
        return str(err)
    if isinstance(err, TimeoutError | socket.timeout):
        return "no answer in time"
    if isinstance(err, ConnectionRefusedError):
        return "refused (no agent: paired by an older keel, or [fleet] not applied yet)"
    if isinstance(err, OSError) and err.strerror:
        return err.strerror.lower()
    return type(err).__name__


def read_seen(path: Path = SEEN) -> dict[str, float]:
    try:
        if path.stat().st_size > MAX_SEEN_BYTES:
            return {}
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {k: float(v) for k, v in data.items()
            if isinstance(k, str) and isinstance(v, int | float) and not isinstance(v, bool)}


def write_seen(seen: dict[str, float], path: Path = SEEN) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(seen, sort_keys=True) + "\n")
    tmp.replace(path)


def poll(config: Config, peers: Sequence[PeerRow], now: float,
         asker: Callable[[str, bytes], bytes] = ask,
         seen: dict[str, float] | None = None) -> list[EdgeRow]:
    """Every edge asked for its status, side by side; `seen` (name -> when it
    last answered) is updated in place with those that answered."""
    from keel.pair.settle import routes_for_edge

    seen = {} if seen is None else seen
    edges = fleet_edges(config)
    ages = {p.public_key: p.handshake_age_s for p in peers}

    def one(edge: Edge) -> EdgeRow:
        due = routes_for_edge(config, edge.public_key)
        try:
            status = wire.parse_status_reply(asker(edge.address, wire.status_request()))
        except (OSError, ValueError) as err:
            return EdgeRow(edge, None, why(err), ages.get(edge.public_key),
                           seen.get(edge.name), due)
        return EdgeRow(edge, status, "", ages.get(edge.public_key), now, due)

    with ThreadPoolExecutor(max_workers=max(1, min(16, len(edges)))) as pool:
        rows = list(pool.map(one, edges))
    for row in rows:
        if row.status is not None:
            seen[row.edge.name] = now
    return rows


def look() -> tuple[list[EdgeRow], float, str]:
    """Every edge of the config in force asked now, when each last answered
    kept on /data: (rows, the time asked, a problem in words or "")."""
    from keel.apply.errors import InvalidConfig
    from keel.model.reading import config_in_force, read_loaded
    from keel.pair.peers import read_peer_rows

    now = time.time()
    try:
        config = read_loaded(config_in_force()).config
    except InvalidConfig as err:
        return [], now, f"the config in force is invalid: {err.summary()}"
    peers, _ = read_peer_rows()
    seen = read_seen()
    rows = poll(config, peers, now, seen=seen)
    try:
        write_seen(seen)
    except OSError as err:
        return rows, now, f"cannot keep when each edge answered ({SEEN}): {err.strerror}"
    return rows, now, ""


def sync_in_force() -> tuple[list[Synced], str]:
    """Every edge of the config in force given its routes: (results, a problem)."""
    from keel.apply.errors import InvalidConfig
    from keel.model.reading import config_in_force, read_loaded

    try:
        config = read_loaded(config_in_force()).config
    except InvalidConfig as err:
        return [], f"the config in force is invalid: {err.summary()}"
    return sync(config), ""


@dataclass(frozen=True)
class Synced:
    name: str
    routes: tuple[str, ...]  # what the edge routes after (as it said), or those given
    error: str = ""


def sync(config: Config, asker: Callable[[str, bytes, float], bytes] = ask,
         only: set[str] | None = None) -> list[Synced]:
    """Every edge (or those named in `only`) given the routes due to it, side
    by side."""
    from keel.pair.settle import routes_for_edge

    edges = [e for e in fleet_edges(config) if only is None or e.name in only]

    def one(edge: Edge) -> Synced:
        due = routes_for_edge(config, edge.public_key)
        try:
            return Synced(edge.name, wire.parse_routes_reply(
                asker(edge.address, wire.routes_request(due), ROUTES_TIMEOUT_S)))
        except (OSError, ValueError) as err:
            return Synced(edge.name, due, why(err))

    with ThreadPoolExecutor(max_workers=max(1, min(16, len(edges)))) as pool:
        return list(pool.map(one, edges))


# --- as text ------------------------------------------------------------------------

def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"


def _mbit(kbit: int | None) -> str:
    return "-" if kbit is None else f"{kbit / 1000:.1f}"


def _age(seconds: float | None) -> str:
    from keel.pair.peers import age

    return age(seconds)


WIDTH = 80  # the VGA console's columns


def lines(rows: Sequence[EdgeRow], now: float) -> list[str]:
    """`keel fleet`: an edge's name, tunnel address and handshake, then its
    figures indented, each line within WIDTH columns; every text that came
    from an edge escaped (keel.shown)."""
    if not rows:
        return ["no edges (pair one: keel pair; an edge paired by an older keel: pair "
                "it again)"]
    out = []
    for r in rows:
        out.append(f"{shown(r.edge.name, 20):<21} {r.edge.address:<16} "
                   f"handshake {_age(r.handshake_age_s)}")
        if r.status is None:
            last = "never answered" if r.last_seen is None \
                else f"last answered {_age(now - r.last_seen)}"
            out.append(f"    NO ANSWER ({last}): {shown(r.error, 200)}")
            continue
        s = r.status
        loss = "-" if s.loss is None else f"{s.loss * 100:.0f} %"
        out.append(f"    p95 {_ms(s.tunnel_p95_ms)} ms now, {_ms(s.day_p95_ms)} ms worst "
                   f"of the day; loss {loss}; CAKE {_mbit(s.cake_up_kbit)}/"
                   f"{_mbit(s.cake_down_kbit)} Mbit/s")
        upgrade = "no upgrade yet" if s.last_upgrade is None \
            else f"last upgrade {shown(s.last_upgrade.result)}"
        routes = "routes in sync" if r.routes_in_sync else "ROUTES BEHIND: keel fleet sync"
        out.append(f"    keel {shown(s.version, 30)} slot {s.slot or '-'}; {upgrade}; {routes}")
        out.append(f"    {shown(s.verdict, 200) if s.verdict else 'healthy'}")
    return [line if len(line) <= WIDTH else line[:WIDTH - 3] + "..." for line in out]

