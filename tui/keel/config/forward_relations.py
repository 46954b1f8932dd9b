"""The rules of port forwards ([[forward]]), run once every key is valid on
its own: names are unique, a range keeps its ports, `via` gives the forward
its role on this router, the target is where that role can reach it, and a
public port is free (no other forward, not keel's own, not opened on the
router itself).

The role, from `via` (the same [[forward]] table is on the hub and on the
edge the target is behind):
- "outer": via names one of our [[wireguard.peer]] (we are the hub): the
  target lies in a LAN that peer routes (its allowed_ips);
- "inner": via is our own system.hostname (we are that edge): the target is
  in our LAN, and the connections come from the hub, the one peer with an
  endpoint;
- "local": no via: the target is in our own LAN.
The public ports are the hub's: an inner forward's are not checked here.

An IPv6 target is not translated (IPv6 has no NAT here): the port is opened
to the target's own, public address, so its target port is the public one,
snat does not apply, and its ports do not take the router's own (they are
another address's): two IPv6 forwards only clash on the same target. Inside
this router's LAN an IPv6 target is in lan.address6's /64, never in the WAN's
delegated prefix, which can change."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from keel.adaptive.wire import PORT as PROBE_PORT
from keel.config.checks import parse_ports, parse_target
from keel.config.errors import Problem
from keel.config.netsets import Address, address, interface, network
from keel.config.schema import Config, Forward
from keel.ports import PAIRING_TCP as PAIRING_PORT

OUTER, INNER, LOCAL = "outer", "inner", "local"
SSH_PORT = 22
DHCP_PORTS = (67, 68)
MAX_LISTED = 8  # names or prefixes spelled out in one message


def public_ports(fwd: Forward) -> tuple[int, int]:
    """(low, high) of a valid forward's public port(s). Raises ValueError."""
    parsed = parse_ports(fwd.port)
    if isinstance(parsed, str):
        raise ValueError(f"forward {fwd.name}: port: {parsed}")
    return parsed


def target_of(fwd: Forward) -> tuple[str, int | None]:
    """(address, port or None) of a valid forward's target: IPv4, or IPv6 in
    its canonical form without brackets. Raises ValueError."""
    parsed = parse_target(fwd.to)
    if isinstance(parsed, str):
        raise ValueError(f"forward {fwd.name}: to: {parsed}")
    return parsed


def family(fwd: Forward) -> int:
    """4 or 6: a valid forward's target's address family."""
    return address(target_of(fwd)[0]).version


def protocols(fwd: Forward) -> tuple[str, ...]:
    return ("tcp", "udp") if fwd.protocol == "both" else (fwd.protocol,)


def peer_index(cfg: Config, name: str) -> int | None:
    """The first [[wireguard.peer]] with this name, or None."""
    for k, peer in enumerate(cfg.wireguard.peer):
        if peer.name == name:
            return k
    return None


def role_of(cfg: Config, fwd: Forward) -> str | None:
    """OUTER, INNER or LOCAL; None when via names neither this router nor a
    peer (a valid config has none such)."""
    if fwd.via is None:
        return LOCAL
    if fwd.via == cfg.system.hostname:
        return INNER
    return OUTER if peer_index(cfg, fwd.via) is not None else None


def _listed(items: list[str]) -> str:
    shown = ", ".join(items[:MAX_LISTED])
    more = len(items) - MAX_LISTED
    return f"{shown} and {more} more" if more > 0 else shown


# --- the forwards alone ---------------------------------------------------------------


def names_and_ranges(cfg: Config) -> Iterator[Problem]:
    """Rules that read [[forward]] alone."""
    seen: dict[str, int] = {}
    for i, fwd in enumerate(cfg.forward):
        if fwd.name in seen:
            yield Problem(f"forward[{i}].name", f"duplicate of forward[{seen[fwd.name]}]")
        seen.setdefault(fwd.name, i)
        low, high = public_ports(fwd)
        port = target_of(fwd)[1]
        if low != high and port is not None:
            yield Problem(f"forward[{i}].to", "a range maps to the same ports: give the "
                                              "target without a port")
        elif family(fwd) == 6:
            if port is not None and port != low:
                yield Problem(f"forward[{i}].to", f"an IPv6 forward is not translated: its "
                                                  f"target port is the public port {low} "
                                                  "(or give the address alone)")
            if fwd.snat:
                yield Problem(f"forward[{i}].snat", "only for an IPv4 target: an IPv6 forward "
                                                    "is not translated (the target sees the "
                                                    "client's address)")


# --- the role and where the target is -------------------------------------------------


def _via(cfg: Config, i: int, fwd: Forward) -> Iterator[Problem]:
    """via names this router or a peer, not both."""
    assert fwd.via is not None
    k = peer_index(cfg, fwd.via)
    if fwd.via == cfg.system.hostname and k is not None:
        yield Problem(f"forward[{i}].via", f"ambiguous: this router's own host name "
                                           f"(system.hostname) and the name of "
                                           f"wireguard.peer[{k}]; rename one of them")
    elif fwd.via != cfg.system.hostname and k is None:
        names = [p.name for p in cfg.wireguard.peer if p.name]
        peers = f"the peers are named {_listed(names)}" if names else "no peer has a name"
        yield Problem(f"forward[{i}].via", f"names neither this router (system.hostname = "
                                           f"{cfg.system.hostname}) nor a [[wireguard.peer]] "
                                           f"({peers})")


def _outer(cfg: Config, i: int, fwd: Forward) -> Iterator[Problem]:
    """We are the hub: the target is behind the peer via names."""
    assert fwd.via is not None
    k = peer_index(cfg, fwd.via)
    assert k is not None
    if not cfg.wireguard.enabled:
        yield Problem(f"forward[{i}].via", f"names wireguard.peer[{k}], but wireguard is "
                                           "not enabled")
        return
    target = address(target_of(fwd)[0])
    nets = [network(text) for text in cfg.wireguard.peer[k].allowed_ips]
    if not any(net.version == target.version and target in net for net in nets):
        yield Problem(f"forward[{i}].to", f"not in a LAN that {fwd.via} routes (its "
                                          f"allowed_ips: {_listed([str(n) for n in nets])})")
        return
    own = [interface(a).network for a in cfg.wireguard.address]
    if any(net.version == target.version and target in net for net in own):
        yield Problem(f"forward[{i}].to", "inside the tunnel's own network "
                                          "(wireguard.address): an edge itself, not a host "
                                          "of its LAN (its own services are not forwarded)")
        return
    if not _routed(cfg, target):
        fix = ("add the edge's LAN to wireguard.prefixes" if cfg.wireguard.route == "prefixes"
               else "set route = \"prefixes\" and list the edge's LAN in wireguard.prefixes")
        yield Problem(f"forward[{i}].to", f"not routed through the tunnel (wireguard.route "
                                          f"= {cfg.wireguard.route}): its connections would "
                                          f"leave by the WAN; {fix}")
    yield from _keel_target(i, fwd)


def _routed(cfg: Config, target: Address) -> bool:
    """Whether the hub routes `target` into the tunnel: IPv4 with route =
    "all", a listed prefix (route = "prefixes"), or IPv6 in the routed
    prefix (its peers' /64s are routed by keel.render.ipv6)."""
    wg = cfg.wireguard
    if wg.route == "all" and target.version == 4:
        return True
    routed = [network(p) for p in wg.prefixes] if wg.route == "prefixes" else []
    if cfg.ipv6.routed_prefix is not None:
        routed.append(network(cfg.ipv6.routed_prefix))
    return any(net.version == target.version and target in net for net in routed)


def _keel_target(i: int, fwd: Forward) -> Iterator[Problem]:
    """An outer forward does not reach a keel service on the far side (a
    router's reflector: the target's port is keel's probe port)."""
    low, high = public_ports(fwd)
    port = target_of(fwd)[1]
    first, last = (port, port) if port is not None else (low, high)
    if "udp" in protocols(fwd) and first <= PROBE_PORT <= last:
        yield Problem(f"forward[{i}].to", f"udp {PROBE_PORT} on the target is keel's own: "
                                          "adaptive CAKE's delay probes (a keel router's "
                                          "reflector is not forwarded to)")


def _in_lan(cfg: Config, i: int, fwd: Forward, why: str) -> Iterator[Problem]:
    """The target is a host of this router's LAN, not the router itself."""
    where = f"forward[{i}].to"
    if cfg.lan is None:
        yield Problem(where, f"{why}, but this router has no [lan]")
        return
    target = address(target_of(fwd)[0])
    if target.version == 6:
        yield from _in_lan6(cfg, where, target, why)
        return
    iface = interface(cfg.lan.address)
    net = iface.network
    if target not in net:
        yield Problem(where, f"not inside the LAN {net} (lan.address): {why}")
    elif target == iface.ip:
        yield Problem(where, "is this router's own LAN address (lan.address), not a host "
                             "behind it")
    elif net.prefixlen < 31 and target in (net.network_address, net.broadcast_address):
        which = "network" if target == net.network_address else "broadcast"
        yield Problem(where, f"is the {which} address of {net}, not a host")


_DELEGATED = "the delegated prefix can change; forward to an address in lan.address6"


def _in_lan6(cfg: Config, where: str, target: Address, why: str) -> Iterator[Problem]:
    """An IPv6 target in the LAN: in lan.address6's /64, not the router."""
    assert cfg.lan is not None
    if cfg.lan.address6 is None:
        yield Problem(where, f"an IPv6 target in this router's LAN needs lan.address6 (a "
                             f"static /64): {_DELEGATED}")
        return
    iface = interface(cfg.lan.address6)
    net = iface.network
    if target not in net:
        yield Problem(where, f"not inside the IPv6 LAN {net} (lan.address6): {why}; "
                             f"{_DELEGATED}")
    elif target == iface.ip:
        yield Problem(where, "is this router's own LAN address (lan.address6), not a host "
                             "behind it")
    elif target == net.network_address:
        yield Problem(where, f"is the subnet-router anycast address of {net}, not a host")


def _hub(cfg: Config, i: int) -> Iterator[Problem]:
    """We are the edge: the connections come through the tunnel from the hub,
    the one peer this router reaches (an endpoint)."""
    where = f"forward[{i}].via"
    if not cfg.wireguard.enabled:
        yield Problem(where, "this router is the edge the target is behind (via = "
                             "system.hostname), but wireguard is not enabled: the connections "
                             "come through the tunnel from the hub")
        return
    hubs = [f"wireguard.peer[{k}]" for k, p in enumerate(cfg.wireguard.peer) if p.endpoint]
    if len(hubs) != 1:
        found = f"{len(hubs)} have one ({_listed(hubs)})" if hubs else "none has one"
        yield Problem(where, "this router is the edge the target is behind: the connections "
                             "come from the hub, the one peer with an endpoint; "
                             f"of the peers {found}")


def _placed(cfg: Config, i: int, fwd: Forward, role: str) -> Iterator[Problem]:
    if role == OUTER:
        yield from _outer(cfg, i, fwd)
    elif role == INNER:
        yield from _in_lan(cfg, i, fwd, "via is this router (the edge the target is behind)")
        yield from _hub(cfg, i)
        yield from _hubs_own(cfg, i, fwd)
    else:
        yield from _in_lan(cfg, i, fwd, "a forward without via goes to a host in this "
                                        "router's LAN (via: the peer it is behind)")


def _hubs_own(cfg: Config, i: int, fwd: Forward) -> Iterator[Problem]:
    """We are the edge: this LAN reaching the hub's public address on the
    forward's port is sent to the target (the hairpin); a port of keel's own
    on the hub (its SSH, pairing, WireGuard) would be taken from the LAN, and
    the hub refuses the same table anyway."""
    hub = next((p for p in cfg.wireguard.peer if p.endpoint), None)
    hub_wg = int(hub.endpoint.rsplit(":", 1)[1]) if hub and hub.endpoint else None
    own = [(proto, port, whose) for proto, port, whose in keel_ports(cfg)
           if not whose.startswith("WireGuard")]
    own += [("udp", hub_wg, "WireGuard (the hub's endpoint)")] if hub_wg else []
    low, high = public_ports(fwd)
    for proto, port, whose in own:
        if proto in protocols(fwd) and low <= port <= high:
            yield Problem(f"forward[{i}].port", f"{proto} {port} is keel's own on the hub: "
                                                f"{whose} (this LAN's connections to it "
                                                "would be sent to the target)")


# --- the public ports -------------------------------------------------------------------


@dataclass(frozen=True)
class _Public:
    """One protocol's public port(s) of a forward with a public side."""

    index: int
    protocol: str
    low: int
    high: int


def _publics(cfg: Config, roles: list[str | None]) -> list[_Public]:
    """The public ports on this router's own address: its IPv4 forwards'."""
    out = []
    for i, fwd in enumerate(cfg.forward):
        if roles[i] in (OUTER, LOCAL) and family(fwd) == 4:
            low, high = public_ports(fwd)
            out += [_Public(i, proto, low, high) for proto in protocols(fwd)]
    return out


def _overlaps(cfg: Config, publics: list[_Public], same: str = "") -> Iterator[Problem]:
    """No two forwards share a public port of a protocol: a sweep in port
    order, each forward told of one earlier (in the file) it overlaps.
    `same` says what they share besides (for IPv6: the target)."""
    pairs: dict[tuple[int, int], list[str]] = {}
    for proto in ("tcp", "udp"):
        reach: _Public | None = None
        for pub in sorted((p for p in publics if p.protocol == proto),
                          key=lambda p: (p.low, p.index)):
            if reach is not None and reach.high >= pub.low:
                later, earlier = max(reach.index, pub.index), min(reach.index, pub.index)
                pairs.setdefault((later, earlier), []).append(proto)
            if reach is None or pub.high > reach.high:
                reach = pub
    for (later, earlier), protos in sorted(pairs.items()):
        yield Problem(f"forward[{later}].port",
                      f"overlaps forward[{earlier}] ({cfg.forward[earlier].name}) on "
                      + " and ".join(protos) + same)


def _targets6(cfg: Config, roles: list[str | None]) -> dict[str, list[_Public]]:
    """The ports opened to each IPv6 target, by its address."""
    out: dict[str, list[_Public]] = {}
    for i, fwd in enumerate(cfg.forward):
        if roles[i] is not None and family(fwd) == 6:
            low, high = public_ports(fwd)
            out.setdefault(target_of(fwd)[0], []).extend(
                _Public(i, proto, low, high) for proto in protocols(fwd))
    return out


def keel_ports(cfg: Config) -> list[tuple[str, int, str]]:
    """(protocol, port, whose) of what keel itself listens to on the WAN."""
    own = [("tcp", SSH_PORT, "SSH"), ("tcp", PAIRING_PORT, "pairing (keel pair)"),
           ("udp", PROBE_PORT, "adaptive CAKE's delay probes"),
           *[("udp", port, "DHCP") for port in DHCP_PORTS]]
    if cfg.wireguard.enabled:
        own.append(("udp", cfg.wireguard.listen_port, "WireGuard (wireguard.listen_port)"))
    return own


def _taken(cfg: Config, publics: list[_Public]) -> Iterator[Problem]:
    """A public port is not keel's own nor opened on the router itself."""
    if not publics:
        return
    own = keel_ports(cfg)
    opened = [(proto, port, f"open on the router itself (firewall.open_{proto}[{n}])")
              for proto in ("tcp", "udp")
              for n, port in enumerate(getattr(cfg.firewall, f"open_{proto}"))]
    for pub in publics:
        for proto, port, whose in own:
            if proto == pub.protocol and pub.low <= port <= pub.high:
                yield Problem(f"forward[{pub.index}].port",
                              f"{proto} {port} is keel's own: {whose}")
        for proto, port, what in opened:
            if proto == pub.protocol and pub.low <= port <= pub.high:
                yield Problem(f"forward[{pub.index}].port", f"{proto} {port} is {what}")


def forwards(cfg: Config) -> Iterator[Problem]:
    """Rules between [[forward]] and the router: the system, the tunnel, the
    LAN and the firewall (their sections valid)."""
    roles: list[str | None] = []
    for i, fwd in enumerate(cfg.forward):
        bad_via = list(_via(cfg, i, fwd)) if fwd.via is not None else []
        yield from bad_via
        role = None if bad_via else role_of(cfg, fwd)
        if role is not None:
            yield from _placed(cfg, i, fwd, role)
        roles.append(role)
    publics = _publics(cfg, roles)
    yield from _overlaps(cfg, publics)
    yield from _taken(cfg, publics)
    for opened in _targets6(cfg, roles).values():
        yield from _overlaps(cfg, opened, " to the same IPv6 target")
