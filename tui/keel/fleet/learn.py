"""What the fleet changes in a config, as pure functions: the routes a hub
gives an edge (keel.pair.settle.routes_for_edge: the hub's LAN and the other
edges'), and the edge's config with them. The edge decides: only private
prefixes of a LAN's size or wider (never a default route or nearly), none
that would capture its own LAN, WAN, gateway or the hub's endpoint; the
hub's peer is the only one changed, and nothing else of the config."""

from __future__ import annotations

import dataclasses
import ipaddress
from collections.abc import Sequence

from keel.config.schema import Config, Peer
from keel.config.wireguard_relations import endpoint_address
from keel.pair import ipv6
from keel.pair.errors import PairRefused
from keel.pair.settle import SHORTEST, Network, is_private, kept_clear, validated

MAX_ROUTES = 64  # routes a hub may give one edge (the config's own bound is larger)


class RoutesRefused(PairRefused):
    """Routes the edge does not take: the first reason, in one line."""


def hub_peer(config: Config) -> Peer | None:
    """The peer marked as this router's hub (fleet = "hub"), or None."""
    return next((p for p in config.wireguard.peer if p.fleet == "hub"), None)


def learned(config: Config, peer: Peer) -> tuple[str, ...]:
    """The routes the hub's peer carries now: its allowed IPs that are not the
    tunnel's own prefix (nor IPv6's everything, which pairing set)."""
    tunnels = [ipaddress.ip_interface(a).network for a in config.wireguard.address]
    out = []
    for text in peer.allowed_ips:
        net = ipaddress.ip_network(text)
        if text == ipv6.EVERYTHING or any(
                net.version == t.version and net.subnet_of(t) for t in tunnels):  # type: ignore[arg-type]
            continue
        out.append(text)
    return tuple(out)


def check_routes(config: Config, peer: Peer, routes: Sequence[str],
                 keep_clear: Sequence[tuple[str, Network]] = ()) -> tuple[str, ...]:
    """The routes in canonical form if the edge takes them all; raises
    RoutesRefused naming the first it does not."""
    if len(routes) > MAX_ROUTES:
        raise RoutesRefused(f"the hub gives {len(routes)} routes: at most {MAX_ROUTES}")
    hub_address = endpoint_address(peer.endpoint) if peer.endpoint else None
    clear = kept_clear(config, str(hub_address) if hub_address else "", keep_clear)
    if config.lan is not None:
        clear.append(("this router's LAN", ipaddress.ip_interface(config.lan.address).network))
    tunnels = [ipaddress.ip_interface(a).network for a in config.wireguard.address]
    out: list[str] = []
    for text in routes:
        try:
            net = ipaddress.ip_network(text, strict=True)
        except ValueError:
            raise RoutesRefused(f"the hub gives {text!r}: not a prefix") from None
        if net.prefixlen < SHORTEST[net.version]:
            raise RoutesRefused(f"the hub gives {net}: a default route or nearly, refused")
        if not is_private(net):
            raise RoutesRefused(f"the hub gives {net}: not private (RFC 1918, "
                                "100.64.0.0/10 or ULA fc00::/7), refused")
        for why, kept in clear:
            if kept.version == net.version and kept.overlaps(net):  # type: ignore[arg-type]
                raise RoutesRefused(f"the hub gives {net}: it would route {why} ({kept}) "
                                    "into the tunnel, refused")
        if any(t.version == net.version and t.overlaps(net) for t in tunnels):  # type: ignore[arg-type]
            raise RoutesRefused(f"the hub gives {net}: inside or around the tunnel's prefix")
        if str(net) not in out:
            out.append(str(net))
    return tuple(out)


def edge_learn(config: Config, routes: Sequence[str],
               keep_clear: Sequence[tuple[str, Network]] = ()) -> Config:
    """The edge's config with `routes` as the routes through its hub (in
    place of those it had): the hub's peer's allowed IPs and, where the
    tunnel routes prefixes, the prefixes. Raises RoutesRefused (no hub peer,
    or a route it does not take); the result is checked by the loader."""
    peer = hub_peer(config)
    if peer is None:
        raise RoutesRefused("this router has no hub (no peer with fleet = \"hub\")")
    new_routes = check_routes(config, peer, routes, keep_clear)
    old_routes = learned(config, peer)
    if new_routes == old_routes:
        return config
    kept = [a for a in peer.allowed_ips if a not in old_routes and a != ipv6.EVERYTHING]
    allowed = (*kept, *new_routes)
    if ipv6.EVERYTHING in peer.allowed_ips:
        allowed = ipv6.with_everything(allowed)
    wg = config.wireguard
    new_peer = dataclasses.replace(peer, allowed_ips=allowed)
    route, prefixes = wg.route, wg.prefixes
    if route != "all":
        prefixes = (*(p for p in prefixes if p not in old_routes),
                    *(r for r in new_routes if r not in prefixes))
        route = "prefixes" if prefixes else "none"
    new_wg = dataclasses.replace(wg, route=route, prefixes=prefixes,
                                 peer=tuple(new_peer if p is peer else p for p in wg.peer))
    return validated(dataclasses.replace(config, wireguard=new_wg), "edge")


def what_changed(before: Sequence[str], after: Sequence[str]) -> str:
    """The change in a few words: "+192.168.78.0/24 -192.168.79.0/24"."""
    words = [f"+{r}" for r in after if r not in before] + [f"-{r}" for r in before
                                                           if r not in after]
    return " ".join(words) or "no change"
