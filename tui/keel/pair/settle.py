"""What pairing changes in each side's config, as pure functions: the hub
admits an edge (a tunnel address from its prefix, the edge's LAN routed to
it), the edge joins the hub (the peer, its tunnel address, the routes). A
refusal says why in one line. Either result is checked by the config loader
itself before anyone applies it."""

from __future__ import annotations

import dataclasses
import ipaddress

from keel.config.dump import to_toml
from keel.config.errors import ConfigError
from keel.config.load import parse_config
from keel.config.schema import Config, Peer, WireGuard
from keel.config.wireguard_relations import endpoint_address, local_networks
from keel.pair.errors import PairRefused
from keel.pair.messages import KEEPALIVE_S, EdgeOffer, HubGrant

IPv4Interface = ipaddress.IPv4Interface


def tunnel_interface(config: Config) -> IPv4Interface:
    """The hub's IPv4 tunnel address, whose prefix edges get addresses from."""
    wg = config.wireguard
    if not wg.enabled:
        raise PairRefused("this router has no tunnel: set wireguard.enabled and "
                          "wireguard.address (like 10.77.0.1/24) first "
                          "(keel config example hub)")
    for text in wg.address:
        iface = ipaddress.ip_interface(text)
        if isinstance(iface, IPv4Interface) and iface.network.prefixlen <= 30:
            return iface
    raise PairRefused("wireguard.address has no IPv4 prefix of /30 or wider to hand out "
                      "tunnel addresses from (like 10.77.0.1/24)")


def _host_networks(peer: Peer, net: ipaddress.IPv4Network) -> list[ipaddress.IPv4Network]:
    out = []
    for text in peer.allowed_ips:
        allowed = ipaddress.ip_network(text)
        if allowed.version == 4 and allowed.overlaps(net):
            out.append(allowed)
    return out


def free_address(config: Config, keep_key: str | None = None) -> ipaddress.IPv4Address:
    """The lowest free host of the hub's tunnel prefix (the address a peer
    with `keep_key` already has, when it pairs again)."""
    iface = tunnel_interface(config)
    net = iface.network
    used: list[ipaddress.IPv4Network] = []
    for peer in config.wireguard.peer:
        taken = _host_networks(peer, net)
        if peer.public_key == keep_key:
            for n in taken:
                if n.prefixlen == 32 and n.network_address in net:
                    return n.network_address
        used += taken
    own = {ipaddress.ip_interface(a).ip for a in config.wireguard.address}
    for host in net.hosts():
        if host not in own and not any(host in n for n in used):
            return host
    raise PairRefused(f"the hub's tunnel prefix {net} is full ({net.num_addresses - 2} "
                      "addresses, all in use): widen wireguard.address or remove a peer")


def _unique_name(wanted: str, taken: set[str]) -> str:
    name, n = wanted, 2
    while name in taken:
        suffix = f"-{n}"
        name, n = wanted[:63 - len(suffix)] + suffix, n + 1
    return name


def _validated(config: Config, side: str) -> Config:
    try:
        return parse_config(to_toml(config), f"the {side}'s paired config").config
    except ConfigError as err:
        first = str(err).strip().splitlines()
        raise PairRefused(f"the {side}'s config would not be valid: "
                          f"{first[-1].strip() if first else err}") from None


def _overlap(lan: ipaddress.IPv4Network | ipaddress.IPv6Network, config: Config,
             skip_key: str) -> str | None:
    for _path, what, net in local_networks(config):
        if net.version == lan.version and net.overlaps(lan):
            return f"the hub's {what.removeprefix('the ')} {net}"
    for text in config.wireguard.address:
        net = ipaddress.ip_interface(text).network
        if net.version == lan.version and net.overlaps(lan):
            return f"the hub's tunnel {net}"
    for peer in config.wireguard.peer:
        if peer.public_key == skip_key:
            continue
        for text in peer.allowed_ips:
            net = ipaddress.ip_network(text)
            if net.version == lan.version and net.overlaps(lan) and net.prefixlen > 0:
                who = f"peer {peer.name!r}" if peer.name else "another peer"
                return f"{who} ({net})"
    return None


def hub_admit(config: Config, offer: EdgeOffer, hub_public_key: str) -> tuple[Config, HubGrant]:
    """The hub's config with the edge as a peer, and what the edge is told."""
    if offer.public_key == hub_public_key:
        raise PairRefused("the edge has the hub's own public key (the same image's key "
                          "copied?): make a new one on the edge")
    wg = config.wireguard
    iface = tunnel_interface(config)
    address = free_address(config, keep_key=offer.public_key)
    old = next((p for p in wg.peer if p.public_key == offer.public_key), None)
    lan = ipaddress.ip_network(offer.lan) if offer.lan else None
    if lan is not None and (why := _overlap(lan, config, offer.public_key)):
        raise PairRefused(f"the edge's LAN {lan} overlaps {why}: give the edge another "
                          "LAN prefix")
    others = [p for p in wg.peer if p.public_key != offer.public_key]
    name = _unique_name(offer.name, {p.name for p in others if p.name})
    allowed = (f"{address}/32",) + ((str(lan),) if lan else ())
    peer = Peer(public_key=offer.public_key, allowed_ips=allowed, name=name)
    peers = tuple(peer if p is old else p for p in wg.peer) if old else (*wg.peer, peer)
    route, prefixes = wg.route, tuple(p for p in wg.prefixes
                                      if not old or p not in old.allowed_ips)
    if lan is not None and route != "all":
        route, prefixes = "prefixes", (*prefixes, str(lan))
    if route == "prefixes" and not prefixes:
        route = "none"
    new_wg = dataclasses.replace(wg, peer=peers, route=route, prefixes=prefixes)
    new = dataclasses.replace(config, wireguard=new_wg, firewall=dataclasses.replace(
        config.firewall, forward_between_peers=True))
    new = _validated(new, "hub")
    routes: list[str] = []
    if config.lan is not None:
        routes.append(str(ipaddress.ip_interface(config.lan.address).network))
    for p in others:
        for text in p.allowed_ips:
            net = ipaddress.ip_network(text)
            if net.prefixlen > 0 and not (net.version == 4 and net.subnet_of(iface.network)) \
                    and text not in routes:
                routes.append(text)
    grant = HubGrant(name=config.system.hostname, public_key=hub_public_key,
                     listen_port=wg.listen_port,
                     tunnel_address=f"{address}/{iface.network.prefixlen}",
                     hub_tunnel=str(iface.ip), routes=tuple(routes), keepalive=KEEPALIVE_S,
                     edge_name=name)
    return new, grant


def hub_endpoint(hub_address: str, port: int) -> str:
    return f"[{hub_address}]:{port}" if ":" in hub_address else f"{hub_address}:{port}"


def tunnel_allowed(net: ipaddress.IPv4Network | ipaddress.IPv6Network,
                   hub: str) -> tuple[str, ...]:
    """The whole tunnel prefix behind the hub (the other edges are there),
    with the hub's own address first as a single address: the self-tests and
    the dashboard probe the peer's first /32 (keel.wireguard.peers)."""
    host = ipaddress.ip_network(hub)
    rest = sorted(net.address_exclude(host), key=lambda n: n.network_address)  # type: ignore[arg-type]
    return (str(host), *map(str, rest))


def edge_join(config: Config, grant: HubGrant, hub_address: str) -> Config:
    """The edge's config with the hub as its peer: the tunnel address the
    hub gave, the hub's tunnel prefix and routes through it, keepalive on."""
    wg: WireGuard = config.wireguard
    tunnel = ipaddress.ip_interface(grant.tunnel_address)
    old = next((p for p in wg.peer if p.public_key == grant.public_key), None)
    others = [p for p in wg.peer if p.public_key != grant.public_key]
    name = _unique_name(grant.name, {p.name for p in others if p.name})
    peer = Peer(public_key=grant.public_key, endpoint=hub_endpoint(hub_address,
                                                                   grant.listen_port),
                allowed_ips=(*tunnel_allowed(tunnel.network, grant.hub_tunnel),
                             *grant.routes), keepalive=grant.keepalive, name=name)
    addresses = tuple(a for a in wg.address
                      if not ipaddress.ip_interface(a).network.overlaps(tunnel.network)
                      or ipaddress.ip_interface(a).version != tunnel.version)
    kept = tuple(p for p in wg.prefixes if not old or p not in old.allowed_ips)
    route, prefixes = wg.route, kept
    if route != "all":
        prefixes = (*kept, *(r for r in grant.routes if r not in kept))
        route = "prefixes" if prefixes else "none"
    new_wg = dataclasses.replace(
        wg, enabled=True, address=(*addresses, str(tunnel)), route=route, prefixes=prefixes,
        peer=tuple(peer if p is old else p for p in wg.peer) if old else (*wg.peer, peer))
    addr = endpoint_address(peer.endpoint)
    if addr is not None and addr in tunnel.network:
        raise PairRefused(f"the hub's address {addr} is inside the tunnel {tunnel.network}")
    return _validated(dataclasses.replace(config, wireguard=new_wg), "edge")


def remove_peer(config: Config, name: str) -> Config:
    """The config without the peer called `name` (and its prefixes in the
    routes); raises PairRefused naming the peers there are."""
    wg = config.wireguard
    peer = next((p for p in wg.peer if p.name == name), None)
    if peer is None:
        names = ", ".join(p.name for p in wg.peer if p.name) or "none has a name"
        raise PairRefused(f"no peer named {name!r} (peers: {names})")
    prefixes = tuple(p for p in wg.prefixes if p not in peer.allowed_ips)
    route = "none" if wg.route == "prefixes" and not prefixes else wg.route
    new_wg = dataclasses.replace(wg, peer=tuple(p for p in wg.peer if p is not peer),
                                 route=route, prefixes=prefixes)
    return _validated(dataclasses.replace(config, wireguard=new_wg), "router")
