"""What the two sides tell each other, checked field by field with the
config's own value checks: a malformed message ends the session."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from keel.config import checks
from keel.pair.errors import PairError
from keel.shown import shown

KEEPALIVE_S = 25  # the edge, behind NAT, keeps its mapping open


@dataclass(frozen=True)
class EdgeOffer:
    name: str  # the edge's host name
    public_key: str
    lan: str | None  # the edge's LAN prefix, routed through the tunnel by the hub
    hub_address: str  # the hub's address as the edge reached it


@dataclass(frozen=True)
class HubGrant:
    name: str  # the hub's host name
    public_key: str
    listen_port: int  # the hub's WireGuard port
    tunnel_address: str  # the edge's tunnel address with the tunnel's prefix
    hub_tunnel: str  # the hub's tunnel address
    routes: tuple[str, ...]  # prefixes reached through the hub, besides the tunnel's own
    keepalive: int
    edge_name: str  # what the hub calls the edge
    # a /64 of the hub's routed IPv6 prefix for the edge's LAN (keel.pair.ipv6);
    # left out of the message when None, so a hub without one pairs with
    # edges that do not know the field
    lan6: str | None = None


_CHECKS = {
    "name": checks.hostname, "edge_name": checks.hostname, "public_key": checks.wg_key,
    "lan": checks.prefix, "hub_address": checks.dns_name, "tunnel_address":
    checks.interface_address, "hub_tunnel": checks.address, "routes": checks.prefix,
    "lan6": checks.prefix,
}
_PORTS = {"listen_port": (1, 65535), "keepalive": (0, 65535)}


def _field(what: str, message: dict[str, Any], name: str, kind: str) -> Any:
    """One field, by its annotation ("str", "str | None", "int", "tuple[str, ...]")."""
    value = message.get(name)
    if kind in ("str", "str | None"):
        if value is None and kind == "str | None":
            return None
        if not isinstance(value, str):
            raise PairError(f"a malformed {what}: {name}: not a string")
        reason = _CHECKS[name](value) if name in _CHECKS else None
    elif kind == "int":
        if type(value) is not int or not _PORTS[name][0] <= value <= _PORTS[name][1]:
            raise PairError(f"a malformed {what}: {name}: not an integer in "
                            f"{_PORTS[name][0]}..{_PORTS[name][1]}")
        reason = None
    else:  # tuple[str, ...]
        if not isinstance(value, list) or len(value) > 256 or not all(
                isinstance(v, str) for v in value):
            raise PairError(f"a malformed {what}: {name}: not a list of strings")
        reason = next((r for v in value if (r := _CHECKS[name](v))), None)
        value = tuple(value)
    if reason:
        raise PairError(f"a malformed {what}: {name}: {shown(reason, limit=200)}")
    return value


def _read(cls: Any, what: str, message: dict[str, Any]) -> Any:
    fields = dataclasses.fields(cls)
    extra = set(message) - {f.name for f in fields}
    if extra:
        raise PairError(f"a malformed {what}: unknown field "
                        f"'{shown(sorted(extra)[0], limit=40)}'")
    return cls(**{f.name: _field(what, message, f.name, str(f.type)) for f in fields})


def offer_from(message: dict[str, Any]) -> EdgeOffer:
    return _read(EdgeOffer, "offer", message)


def grant_from(message: dict[str, Any]) -> HubGrant:
    return _read(HubGrant, "grant", message)


def as_message(value: EdgeOffer | HubGrant) -> dict[str, Any]:
    return {k: list(v) if isinstance(v, tuple) else v
            for k, v in dataclasses.asdict(value).items()
            if not (k == "lan6" and v is None)}
