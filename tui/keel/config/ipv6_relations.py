"""The rules of IPv6 between keys, run once every key is valid on its own.

Two ways a LAN gets IPv6 (keel.config.schema):
- `lan.ipv6_from_wan`: a /64 of the prefix the WAN delegates (wan.ipv6 =
  "auto"); nothing to check here: without it the key has no effect, which
  its description says;
- `lan.address6`: a static /64 of the hub's routed prefix, routed through
  the tunnel: the LAN's IPv6 leaves by the hub, the one peer with an
  endpoint and "::/0" in its allowed_ips (WireGuard takes any source from
  it and sends it anything), and no other allowed IP of a peer may hold the
  LAN's /64 (the peer could send from the LAN's own addresses). An allowed
  IP that is or lies inside the /64 is refused with the router's other
  links (keel.config.wireguard_relations.local_networks).

The hub's side, `[ipv6]`: its routed prefix is handed to the edges a /64
each (pairing gives one), so an IPv6 prefix of a peer's allowed_ips inside
it is a /64 (with ndp_proxy a single address, a /128, too: the hub answers
for each /128 on the WAN's link, keel.render.ipv6); two peers never hold
the same one (the overlap rule of wireguard_relations says so). It needs
the tunnel and IPv6 on the WAN, and it is not the WAN's own on-link subnet
(with ndp_proxy, give wan.address as a /128)."""

from __future__ import annotations

from collections.abc import Iterator

from keel.config.errors import Problem
from keel.config.netsets import Network, address, interface, network
from keel.config.schema import Config

DEFAULT6 = "::/0"
LAN6_LENGTH = 64
MAX_LISTED = 8


def _listed(items: list[str]) -> str:
    shown = ", ".join(items[:MAX_LISTED])
    more = len(items) - MAX_LISTED
    return f"{shown} and {more} more" if more > 0 else shown


def _is_default6(net: Network) -> bool:
    return net.version == 6 and net.prefixlen == 0


def lan6_network(cfg: Config) -> Network | None:
    """The LAN's static IPv6 /64 (lan.address6), or None."""
    if cfg.lan is None or cfg.lan.address6 is None:
        return None
    return interface(cfg.lan.address6).network


def hub_peers6(cfg: Config) -> list[int]:
    """The peers lan.address6 can leave by: an endpoint and ::/0 in allowed_ips."""
    return [k for k, peer in enumerate(cfg.wireguard.peer)
            if peer.endpoint and any(_is_default6(network(t)) for t in peer.allowed_ips)]


def _static_wan6(cfg: Config) -> bool:
    """The WAN has a static IPv6 address or gateway."""
    w = cfg.wan
    return ((w.address is not None and interface(w.address).version == 6)
            or (w.gateway is not None and address(w.gateway).version == 6))


def wan(cfg: Config) -> Iterator[Problem]:
    """wan.ipv6 = "off" means no IPv6 on the WAN: not with a static IPv6 there."""
    if cfg.wan.ipv6 == "off" and _static_wan6(cfg):
        yield Problem("wan.ipv6", 'off (no IPv6 on the WAN), but wan.address or wan.gateway '
                                  'is IPv6: set ipv6 = "auto"')


def lan(cfg: Config) -> Iterator[Problem]:
    """lan.address6 is routed through the tunnel: the hub, and no other peer
    holding the LAN's /64 (rules between lan and wireguard)."""
    net = lan6_network(cfg)
    if net is None:
        return
    wg = cfg.wireguard
    need = ('the hub as a [[wireguard.peer]] with an endpoint and "::/0" in its allowed_ips '
            "(the LAN's IPv6 comes and goes through it)")
    if not wg.enabled:
        yield Problem("lan.address6", "routed through the tunnel from the hub's routed prefix: "
                                      f"needs wireguard.enabled = true and {need}")
        return
    hubs = hub_peers6(cfg)
    if not hubs:
        with_endpoint = [k for k, peer in enumerate(wg.peer) if peer.endpoint]
        if len(with_endpoint) == 1:
            fix = f'add "::/0" to wireguard.peer[{with_endpoint[0]}].allowed_ips'
        elif with_endpoint:
            fix = 'add "::/0" to the allowed_ips of the hub among ' + _listed(
                [f"wireguard.peer[{k}]" for k in with_endpoint])
        else:
            fix = "no peer has an endpoint"
        yield Problem("lan.address6", f"routed through the tunnel: needs {need}; {fix}")
    elif len(hubs) > 1:
        yield Problem("lan.address6", "routed through the tunnel to one hub, but "
                                      + _listed([f"wireguard.peer[{k}]" for k in hubs])
                                      + ' each have an endpoint and "::/0" in allowed_ips')
    for i, peer in enumerate(wg.peer):
        for j, text in enumerate(peer.allowed_ips):
            held = network(text)
            if (held.version == 6 and not _is_default6(held) and held != net
                    and held.supernet_of(net)):  # type: ignore[arg-type]
                yield Problem(f"wireguard.peer[{i}].allowed_ips[{j}]",
                              f"contains the IPv6 LAN {net} (lan.address6): the peer could "
                              "send from the LAN's own addresses; only ::/0 (the hub's "
                              "default route) may hold it")


def routed(cfg: Config) -> Iterator[Problem]:
    """[ipv6]: a routed prefix goes with the tunnel and IPv6 on the WAN, the
    edges' LANs in it are /64s, and an NDP proxy has a prefix to answer for."""
    v6 = cfg.ipv6
    if v6.routed_prefix is None:
        if v6.ndp_proxy:
            yield Problem("ipv6.ndp_proxy", "needs ipv6.routed_prefix: the prefix whose "
                                            "addresses the hub answers for on the WAN")
        return
    prefix = network(v6.routed_prefix)
    if not cfg.wireguard.enabled:
        yield Problem("ipv6.routed_prefix", "needs wireguard enabled: its /64s go to the "
                                            "edges through the tunnel")
    if cfg.wan.ipv6 == "off":
        yield Problem("ipv6.routed_prefix", 'needs IPv6 on the WAN, but wan.ipv6 is "off"')
    if cfg.wan.address:
        subnet = interface(cfg.wan.address).network
        if (subnet.version == 6 and subnet.prefixlen < subnet.max_prefixlen
                and subnet.overlaps(prefix)):  # type: ignore[arg-type]
            yield Problem("ipv6.routed_prefix",
                          f"overlaps the WAN subnet {subnet} (wan.address): its on-link route "
                          "would take the edges' addresses (on the WAN's link, with "
                          "ndp_proxy: give wan.address as a /128)")
    if not cfg.wireguard.enabled:
        return
    lengths = (LAN6_LENGTH, 128) if v6.ndp_proxy else (LAN6_LENGTH,)
    for i, peer in enumerate(cfg.wireguard.peer):
        for j, text in enumerate(peer.allowed_ips):
            held = network(text)
            if (held.version == 6 and held.subnet_of(prefix)  # type: ignore[arg-type]
                    and held.prefixlen not in lengths):
                also = " or, with ndp_proxy, one address (/128); " if v6.ndp_proxy else "; "
                yield Problem(f"wireguard.peer[{i}].allowed_ips[{j}]",
                              f"/{held.prefixlen} inside ipv6.routed_prefix {prefix}: an "
                              f"edge's LAN is one /64 of it{also}tunnel addresses come from "
                              "outside it, like a ULA fd00::/64")
