"""What pairing changes in each side's config, as pure functions: the hub
admits an edge (a tunnel address from its prefix, the edge's LAN routed to
it), the edge joins the hub (the peer, its tunnel address, the routes). A
refusal says why in one line. Either result is checked by the config loader
itself before anyone applies it."""

from __future__ import annotations

import contextlib
import dataclasses
import ipaddress
from collections.abc import Sequence

from keel.config.dump import to_toml
from keel.config.errors import ConfigError
from keel.config.load import parse_config
from keel.config.schema import Config, Peer, WireGuard
from keel.config.wireguard_relations import endpoint_address, local_networks
from keel.pair import ipv6
from keel.pair.errors import PairRefused
from keel.pair.messages import KEEPALIVE_S, EdgeOffer, HubGrant

IPv4Interface = ipaddress.IPv4Interface
Network = ipaddress.IPv4Network | ipaddress.IPv6Network
Address = ipaddress.IPv4Address | ipaddress.IPv6Address

# what an edge may claim as its LAN without a word from the hub's operator:
# private space (RFC 1918, RFC 6598 shared space, ULA) of a LAN's size
PRIVATE = tuple(ipaddress.ip_network(p) for p in (
    "10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "100.64.0.0/10", "fc00::/7"))
LAN_LENGTHS = {4: (16, 30), 6: (48, 64)}
# a route this short is a default route or nearly: never taken from the other side
SHORTEST = {4: 8, 6: 16}


def is_private(net: Network) -> bool:
    """Inside RFC 1918, RFC 6598 shared space (100.64.0.0/10) or ULA (fc00::/7)."""
    return any(net.version == p.version and net.subnet_of(p)  # type: ignore[arg-type]
               for p in PRIVATE)


def lan_refusal(lan: Network, allow_public: tuple[str, ...] = ()) -> str | None:
    """Why the hub does not route `lan` to an edge, or None. `allow_public`:
    prefixes the hub's operator named (keel pair --allow-public PREFIX)."""
    if lan.prefixlen < SHORTEST[lan.version]:
        return f"the edge's LAN {lan} is a /{lan.prefixlen}: too wide to route to one edge"
    if any(lan == ipaddress.ip_network(p) for p in allow_public):
        return None
    low, high = LAN_LENGTHS[lan.version]
    if not is_private(lan):
        return (f"the edge's LAN {lan} is not private (RFC 1918, 100.64.0.0/10 or ULA "
                f"fc00::/7): if it is really the edge's, run keel pair --allow-public {lan} "
                "on the hub")
    if not low <= lan.prefixlen <= high:
        return (f"the edge's LAN {lan} is a /{lan.prefixlen}: a LAN is /{low} to /{high} "
                f"(or run keel pair --allow-public {lan} on the hub)")
    return None


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


def validated(config: Config, side: str) -> Config:
    try:
        return parse_config(to_toml(config), f"the {side}'s paired config").config
    except ConfigError as err:
        first = str(err).strip().splitlines()
        raise PairRefused(f"the {side}'s config would not be valid: "
                          f"{first[-1].strip() if first else err}") from None


def _overlap(lan: ipaddress.IPv4Network | ipaddress.IPv6Network, config: Config,
             skip_key: str, live: Sequence[tuple[str, Network]] = ()) -> str | None:
    for _path, what, net in local_networks(config):
        if net.version == lan.version and net.overlaps(lan):
            return f"the hub's {what.removeprefix('the ')} {net}"
    for what, net in live:  # as the hub's interfaces have them now (a DHCP lease)
        if net.version == lan.version and net.overlaps(lan):  # type: ignore[arg-type]
            return f"{what} {net}"
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


def _same_edge(old: Peer, name: str, lan: Network | None, tunnel: Network,
               routed: ipaddress.IPv6Network | None = None) -> bool:
    """An offer with a peer's public key is that edge pairing again (to
    learn the routes of edges paired since) when it keeps the peer's name
    and LAN: only then is the peer rewritten, and then to the same thing.
    Someone with a code and a copy of a peer's public key (which is not
    secret) cannot move that peer's LAN or rename it while the real edge's
    live session would make the hub keep the change."""
    lans = {ipaddress.ip_network(a) for a in old.allowed_ips}
    lans = {n for n in lans if not (n.version == 4 and n.subnet_of(tunnel))  # type: ignore[arg-type]
            and not ipv6.in_routed(str(n), routed)}  # the /64 the hub handed it
    return old.name == name and lans == ({lan} if lan else set())


def hub_admit(config: Config, offer: EdgeOffer, hub_public_key: str,
              allow_public: tuple[str, ...] = (),
              live: Sequence[tuple[str, Network]] = ()) -> tuple[Config, HubGrant]:
    """The hub's config with the edge as a peer, and what the edge is told.
    `allow_public`: public LAN prefixes the hub's operator allows. `live`:
    (what, network) of the hub's interfaces and gateways as they are now
    (keel.pair.run reads them: a WAN by DHCP is in no config), which the
    edge's LAN must not overlap either."""
    if offer.public_key == hub_public_key:
        raise PairRefused("the edge has the hub's own public key (the same image's key "
                          "copied?): make a new one on the edge")
    wg = config.wireguard
    iface = tunnel_interface(config)
    address = free_address(config, keep_key=offer.public_key)
    old = next((p for p in wg.peer if p.public_key == offer.public_key), None)
    lan = ipaddress.ip_network(offer.lan) if offer.lan else None
    if lan is not None and (why := lan_refusal(lan, allow_public)):
        raise PairRefused(why)
    if lan is not None and (why := _overlap(lan, config, offer.public_key, live)):
        raise PairRefused(f"the edge's LAN {lan} overlaps {why}: give the edge another "
                          "LAN prefix")
    others = [p for p in wg.peer if p.public_key != offer.public_key]
    name = _unique_name(offer.name, {p.name for p in others if p.name})
    routed = ipv6.routed_prefix(config)
    if old is not None and not _same_edge(old, name, lan, iface.network, routed):
        who = f"peer {old.name!r}" if old.name else "a peer without a name"
        raise PairRefused(f"the edge offers the public key of {who} with another name or "
                          f"LAN ({name}, {lan or 'no LAN'}): refused; if that edge really "
                          f"changed, remove it first (keel peers remove {old.name or 'NAME'})")
    # an edge with a LAN gets a /64 of the hub's routed IPv6 prefix, if it has one
    lan6 = ipv6.free_lan6(config, keep_key=offer.public_key) \
        if routed is not None and lan is not None else None
    allowed = (f"{address}/32",) + ((str(lan),) if lan else ()) + ((str(lan6),) if lan6 else ())
    peer = Peer(public_key=offer.public_key, allowed_ips=allowed, name=name, fleet="edge")
    peers = tuple(peer if p is old else p for p in wg.peer) if old else (*wg.peer, peer)
    # pairing again (the same edge: the same LAN) leaves the prefixes as they are
    route, prefixes = wg.route, wg.prefixes
    if lan is not None and route != "all":
        route = "prefixes"
        for net in (lan, lan6) if lan6 else (lan,):
            prefixes = prefixes if str(net) in prefixes else (*prefixes, str(net))
    if route == "prefixes" and not prefixes:
        route = "none"
    new_wg = dataclasses.replace(wg, peer=peers, route=route, prefixes=prefixes)
    new = dataclasses.replace(config, wireguard=new_wg, firewall=dataclasses.replace(
        config.firewall, forward_between_peers=True))
    new = validated(new, "hub")
    routes = routes_for_edge(config, offer.public_key)
    grant = HubGrant(name=config.system.hostname, public_key=hub_public_key,
                     listen_port=wg.listen_port,
                     tunnel_address=f"{address}/{iface.network.prefixlen}",
                     hub_tunnel=str(iface.ip), routes=tuple(routes), keepalive=KEEPALIVE_S,
                     edge_name=name, lan6=str(lan6) if lan6 else None)
    return new, grant


def routes_for_edge(config: Config, edge_key: str) -> tuple[str, ...]:
    """What the hub routes to the edge with public key `edge_key` through the
    tunnel: the hub's LAN and every other peer's LANs (not their tunnel
    addresses, inside the tunnel's prefix already, nor the edges' /64s of
    the hub's routed IPv6 prefix: an edge sends all its IPv6 to the hub
    anyway, and those are public). Pairing grants them; the fleet keeps
    every edge's up to date as edges come and go (keel.fleet)."""
    iface = tunnel_interface(config)
    routed = ipv6.routed_prefix(config)
    routes: list[str] = []
    if config.lan is not None:
        routes.append(str(ipaddress.ip_interface(config.lan.address).network))
    for p in config.wireguard.peer:
        if p.public_key == edge_key:
            continue
        for text in p.allowed_ips:
            net = ipaddress.ip_network(text)
            if net.prefixlen > 0 and not (net.version == 4 and net.subnet_of(iface.network)) \
                    and not ipv6.in_routed(text, routed) and text not in routes:
                routes.append(text)
    return tuple(routes)


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


def kept_clear(config: Config, hub_address: str,
                keep_clear: Sequence[tuple[str, Network]]) -> list[tuple[str, Network]]:
    """What the tunnel must never capture: the edge's WAN subnet and gateway
    (from the config when static; `keep_clear` adds what is live: a DHCP
    lease, the default gateway, the address the hub was reached at) and
    the hub's endpoint."""
    found = list(keep_clear)
    wan = config.wan
    if wan.address:
        found.append(("this router's WAN subnet", ipaddress.ip_interface(wan.address).network))
    if wan.gateway:
        found.append(("this router's gateway", ipaddress.ip_network(wan.gateway)))
    with contextlib.suppress(ValueError):
        found.append(("the hub's address", ipaddress.ip_network(hub_address)))
    return found


def _check_grant(config: Config, grant: HubGrant, hub_address: str,
                 keep_clear: Sequence[tuple[str, Network]],
                 allow_public: tuple[str, ...] = ()) -> None:
    """A grant the edge can take: its own tunnel address inside the prefix
    with the hub's, and nothing routed into the tunnel that would capture
    the edge's way out (its WAN, its gateway, the hub's endpoint) or all
    traffic (a default route, or nearly: shorter than /8, /16 in IPv6; or
    the public space in pieces, 1.0.0.0/8 to 223.0.0.0/8). Besides the
    tunnel prefix only private routes are taken (RFC 1918, 100.64.0.0/10,
    ULA fc00::/7: the hub itself admits only private LANs unless its
    operator named a public one), and the public ones this router's
    operator named (keel pair --allow-public PREFIX HUB CODE)."""
    tunnel = ipaddress.ip_interface(grant.tunnel_address)
    hub = ipaddress.ip_address(grant.hub_tunnel)
    if hub.version != tunnel.version or hub not in tunnel.network or hub == tunnel.ip:
        raise PairRefused(f"the hub's grant does not hold together: its tunnel address {hub} "
                          f"is not another address of the tunnel {tunnel.network}")
    if tunnel.ip in (tunnel.network.network_address, tunnel.network.broadcast_address) \
            and tunnel.network.prefixlen < tunnel.max_prefixlen - 1:
        raise PairRefused(f"the hub's grant gives this router {tunnel.ip}, not a host "
                          f"address of {tunnel.network}")
    nets: list[tuple[str, Network]] = [("the tunnel", tunnel.network)]
    nets += [("a route", ipaddress.ip_network(r)) for r in grant.routes]
    clear = kept_clear(config, hub_address, keep_clear)
    for what, net in nets:
        if net.prefixlen < SHORTEST[net.version]:
            raise PairRefused(f"the hub's grant routes {net} into the tunnel: a default route "
                              "or nearly, which this router did not ask for")
        for why, kept in clear:
            if kept.version == net.version and kept.overlaps(net):  # type: ignore[arg-type]
                raise PairRefused(f"the hub's grant would route {why} ({kept}) into the "
                                  f"tunnel ({what} {net}): refused")
        if what == "a route" and not is_private(net) \
                and not any(net == ipaddress.ip_network(p) for p in allow_public):
            raise PairRefused(f"the hub's grant routes {net} into the tunnel: not private "
                              "(RFC 1918, 100.64.0.0/10 or ULA fc00::/7), refused; if that "
                              "network is really behind the hub, pair with keel pair "
                              f"--allow-public {net} HUB CODE")


def edge_join(config: Config, grant: HubGrant, hub_address: str,
              keep_clear: Sequence[tuple[str, Network]] = (),
              allow_public: tuple[str, ...] = ()) -> Config:
    """The edge's config with the hub as its peer: the tunnel address the
    hub gave, the hub's tunnel prefix and routes through it, keepalive on.
    `keep_clear`: (what, network) the grant must not route into the tunnel,
    besides those the config names (keel.pair.run reads them live).
    `allow_public`: public routes this router's operator takes from the hub
    (keel pair --allow-public PREFIX HUB CODE); private ones need no word."""
    _check_grant(config, grant, hub_address, keep_clear, allow_public)
    wg: WireGuard = config.wireguard
    tunnel = ipaddress.ip_interface(grant.tunnel_address)
    old = next((p for p in wg.peer if p.public_key == grant.public_key), None)
    others = [p for p in wg.peer if p.public_key != grant.public_key]
    name = _unique_name(grant.name, {p.name for p in others if p.name})
    # a /64 for the LAN from the hub's routed IPv6 prefix: on the LAN, and
    # every IPv6 destination reached through the hub (from that /64 only: the
    # edge routes by source)
    lan = config.lan
    allowed = (*tunnel_allowed(tunnel.network, grant.hub_tunnel), *grant.routes)
    if grant.lan6 is not None and lan is not None:
        _, address6 = ipv6.edge_lan6(grant.lan6)
        lan = dataclasses.replace(lan, address6=address6)
        allowed = ipv6.with_everything(allowed)
    peer = Peer(public_key=grant.public_key, endpoint=hub_endpoint(hub_address,
                                                                   grant.listen_port),
                allowed_ips=allowed, keepalive=grant.keepalive, name=name, fleet="hub")
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
    return validated(dataclasses.replace(config, wireguard=new_wg, lan=lan), "edge")


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
    return validated(dataclasses.replace(config, wireguard=new_wg), "router")
