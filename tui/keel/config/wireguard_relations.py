"""The rules between the tunnel and the rest: peers are unique and their
allowed IPs do not overlap, what is routed through the tunnel has a peer to
go to, and the tunnel never takes the router's own networks or the way to a
peer's endpoint.

What keel routes into the tunnel decides what can cut the router off
(keel.render.wireguard): `route = "prefixes"` puts each prefix in the main
table (`ip route replace P dev wg0`), so a prefix that is, holds or is held
by the LAN or the static WAN subnet, or covers a peer's endpoint, takes that
traffic (and the tunnel's own packets) into the tunnel. `route = "all"`
routes the default through wg0 in a table of its own that WireGuard's own,
fwmark-ed packets skip (wg-quick's scheme), so 0.0.0.0/0 and ::/0 in
allowed_ips are the normal full tunnel. allowed_ips themselves are never
routed: WireGuard only picks the peer for what is routed into wg0 and
filters what comes out. So allowed_ips may contain the LAN (0.0.0.0/0 does),
but not lie inside the LAN or the WAN subnet: those addresses are on a local
link, nothing sent to them would reach the peer, and the peer could send
from them."""

from __future__ import annotations

from collections.abc import Iterator

from keel.config.errors import Problem
from keel.config.netsets import (
    Address,
    NetSet,
    Network,
    address,
    earliest_overlaps,
    interface,
    network,
)
from keel.config.schema import Config, WireGuard

_LOOP = "the tunnel's own packets would loop into it"


def allowed_networks(wg: WireGuard) -> list[tuple[int, int, Network]]:
    """(peer, index, network) of every allowed IP, in file order."""
    return [(i, j, network(text)) for i, peer in enumerate(wg.peer)
            for j, text in enumerate(peer.allowed_ips)]


def peers(wg: WireGuard, allowed: list[tuple[int, int, Network]]) -> Iterator[Problem]:
    overlaps = earliest_overlaps([net for _, _, net in allowed])
    by_peer: dict[int, list[int]] = {}
    for position, (i, _j, _net) in enumerate(allowed):
        by_peer.setdefault(i, []).append(position)
    seen_keys: dict[str, int] = {}
    seen_names: dict[str, int] = {}
    hubs = [i for i, p in enumerate(wg.peer) if p.fleet == "hub"]
    for i in hubs[1:]:
        yield Problem(f"wireguard.peer[{i}].fleet", f"hub, but wireguard.peer[{hubs[0]}] is "
                                                    "this router's hub already: one hub")
    for i, peer in enumerate(wg.peer):
        if peer.fleet == "hub" and not peer.endpoint:
            yield Problem(f"wireguard.peer[{i}].fleet", "hub, but the peer has no endpoint "
                                                        "(an edge reaches its hub)")
        if peer.upgrade_first and peer.fleet != "edge":
            yield Problem(f"wireguard.peer[{i}].upgrade_first",
                          "true, but the peer is no edge of this hub (fleet = \"edge\")")
        if peer.fleet == "edge" and peer.endpoint:
            yield Problem(f"wireguard.peer[{i}].fleet", "edge, but the peer has an endpoint "
                                                        "(a hub's edges reach it)")
        if peer.public_key in seen_keys:
            yield Problem(f"wireguard.peer[{i}].public_key",
                          f"duplicate of wireguard.peer[{seen_keys[peer.public_key]}]")
        seen_keys.setdefault(peer.public_key, i)
        if peer.name is not None:
            if peer.name in seen_names:
                yield Problem(f"wireguard.peer[{i}].name",
                              f"duplicate of wireguard.peer[{seen_names[peer.name]}]")
            seen_names.setdefault(peer.name, i)
        if not peer.allowed_ips:
            yield Problem(f"wireguard.peer[{i}].allowed_ips", "empty: nothing would reach "
                                                              "this peer")
        for position in by_peer.get(i, ()):
            if position in overlaps:
                other, _, onet = allowed[overlaps[position]]
                where = "earlier in this peer" if other == i else f"wireguard.peer[{other}]"
                yield Problem(f"wireguard.peer[{i}].allowed_ips[{allowed[position][1]}]",
                              f"overlaps {onet} of {where}")


def routes(wg: WireGuard, allowed: list[tuple[int, int, Network]]) -> Iterator[Problem]:
    if wg.route == "all":
        if not any(net.prefixlen == 0 for _, _, net in allowed):
            yield Problem("wireguard.route", "all, but no peer has 0.0.0.0/0 (or ::/0) in "
                                             "allowed_ips: WireGuard would drop the traffic")
    elif wg.route == "prefixes" and not wg.prefixes:
        yield Problem("wireguard.prefixes", "missing: route = prefixes")
    elif wg.route != "prefixes" and wg.prefixes:
        yield Problem("wireguard.prefixes", f"only used with route = prefixes (route is "
                                            f"{wg.route})")
    if wg.route != "prefixes":
        return
    covering = NetSet([net for _, _, net in allowed])
    for i, text in enumerate(wg.prefixes):
        if covering.container(network(text)) is None:
            yield Problem(f"wireguard.prefixes[{i}]", "no peer's allowed_ips cover it: "
                                                      "WireGuard would drop the traffic")


def local_networks(cfg: Config) -> list[tuple[str, str, Network]]:
    """The router's own links: (key path, what, subnet)."""
    out: list[tuple[str, str, Network]] = []
    if cfg.lan is not None:
        out.append(("lan.address", "the LAN", interface(cfg.lan.address).network))
        if cfg.lan.address6 is not None:
            out.append(("lan.address6", "the IPv6 LAN", interface(cfg.lan.address6).network))
    if cfg.wan.mode == "static" and cfg.wan.address:
        out.append(("wan.address", "the WAN subnet",
                    interface(cfg.wan.address).network))
    return out


def _relation(net: Network, local: Network) -> str | None:
    if net.version != local.version:
        return None
    if net == local:
        return "is"
    if net.subnet_of(local):  # type: ignore[arg-type]
        return "inside"
    if net.supernet_of(local):  # type: ignore[arg-type]
        return "contains"
    return None


def endpoint_address(endpoint: str | None) -> Address | None:
    """The address of an endpoint written as an IP literal, else None."""
    if not endpoint:
        return None
    host = endpoint.rsplit(":", 1)[0].removeprefix("[").removesuffix("]")
    try:
        return address(host)
    except ValueError:
        return None  # a host name: resolved only when the tunnel comes up


def routed_prefixes(cfg: Config) -> Iterator[Problem]:
    """What `route = "prefixes"` puts in the main table must leave the
    router's own links and the way to the peers alone."""
    wg = cfg.wireguard
    if wg.route != "prefixes":
        return
    local = local_networks(cfg)
    nets = [network(text) for text in wg.prefixes]
    endpoints = [(k, endpoint_address(peer.endpoint)) for k, peer in enumerate(wg.peer)]
    routed = NetSet(nets)
    loops: dict[int, tuple[int, Address]] = {}
    for k, addr in endpoints:
        if addr is not None:
            for hit in routed.containers(addr):
                loops.setdefault(hit, (k, addr))
    for i, net in enumerate(nets):
        path = f"wireguard.prefixes[{i}]"
        if net.prefixlen == 0:
            yield Problem(path, 'the default route: use route = "all", which keeps the '
                                "tunnel's own packets on the WAN")
            continue
        for where, what, subnet in local:
            relation = _relation(net, subnet)
            if relation:
                yield Problem(path, f"{relation} {what} {subnet} ({where}): routed into the "
                                    "tunnel, it would cut the router off that link")
                break
        else:
            if i in loops:
                k, addr = loops[i]
                yield Problem(path, f"covers the endpoint of wireguard.peer[{k}] ({addr}): "
                                    + _LOOP)


def allowed_on_local_links(cfg: Config, allowed: list[tuple[int, int, Network]]
                           ) -> Iterator[Problem]:
    local = local_networks(cfg)
    if not local:
        return
    for i, j, net in allowed:
        for where, what, subnet in local:
            relation = _relation(net, subnet)
            if relation in ("is", "inside"):
                yield Problem(f"wireguard.peer[{i}].allowed_ips[{j}]",
                              f"{relation} {what} {subnet} ({where}): those addresses are on "
                              "the router's own link, not behind this peer")
                break


def endpoints_in_the_tunnel(wg: WireGuard) -> Iterator[Problem]:
    """An endpoint inside the tunnel's own subnet is reached through wg0."""
    own = [(f"wireguard.address[{n}]", interface(a).network)
           for n, a in enumerate(wg.address)]
    for k, peer in enumerate(wg.peer):
        addr = endpoint_address(peer.endpoint)
        if addr is None:
            continue
        for where, net in own:
            if addr.version == net.version and addr in net:
                yield Problem(f"wireguard.peer[{k}].endpoint",
                              f"inside the tunnel's own subnet {net} ({where}): " + _LOOP)
                break


def wireguard(cfg: Config) -> Iterator[Problem]:
    wg = cfg.wireguard
    if not wg.enabled:
        if cfg.wan.shaping.attach == "tunnel":
            yield Problem("wan.shaping.attach", "tunnel, but wireguard is not enabled")
        if cfg.selftest.iperf3_server:
            yield Problem("selftest.iperf3_server", "needs wireguard enabled")
        if cfg.firewall.forward_tunnel_to_wan:
            yield Problem("firewall.forward_tunnel_to_wan", "needs wireguard enabled")
        if cfg.firewall.forward_between_peers:
            yield Problem("firewall.forward_between_peers", "needs wireguard enabled")
        return
    if not wg.address:
        yield Problem("wireguard.address", "missing: the tunnel needs an address")
    allowed = allowed_networks(wg)
    yield from peers(wg, allowed)
    yield from routes(wg, allowed)


def tunnel_and_links(cfg: Config) -> Iterator[Problem]:
    """Rules between the tunnel and the LAN and WAN (their sections valid)."""
    if not cfg.wireguard.enabled:
        return
    yield from routed_prefixes(cfg)
    yield from allowed_on_local_links(cfg, allowed_networks(cfg.wireguard))
    yield from endpoints_in_the_tunnel(cfg.wireguard)
