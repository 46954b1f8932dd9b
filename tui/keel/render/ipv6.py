"""IPv6 facts of the model that the plan turns into kernel settings, routes
and neighbour proxies: the WAN's sysctls, the hub's peers' prefixes routed
into the tunnel, the addresses the hub answers neighbour solicitations for.

The hub's prefix ([ipv6] routed_prefix) comes in one of two ways:
- routed: the provider routes a prefix (a /56, a /48) to the hub's WAN
  address. Each edge's /64 of it is in that peer's allowed_ips, and the hub
  routes it into the tunnel: the provider's packets for it arrive at the
  hub by the provider's route, nothing to answer on the WAN's link;
- on-link (ipv6.ndp_proxy): the provider puts a /64 on the WAN's link and
  asks by neighbour solicitation for each address in it. The hub routes
  the edges' parts into the tunnel and answers for them on the WAN (proxy
  NDP: proxy_ndp = 1 and one `ip -6 neigh add proxy ADDR dev WAN` per
  address). The kernel answers only for the addresses listed one by one,
  no prefix: so a peer's allowed /128s are answered for, and of a larger
  prefix only its first address (<prefix>::1, the edge's router address).
  One on-link /64 cannot be cut into /64s for the edges' LANs (SLAAC needs
  a /64 on the LAN): with an on-link /64 an edge gets single addresses
  (/128s) routed through the tunnel, not a LAN prefix; a LAN /64 needs a
  routed prefix."""

from __future__ import annotations

import ipaddress

from keel.model import RouterModel, WireGuard

IPv6Net = ipaddress.IPv6Network


def wan_sysctls(model: RouterModel) -> dict[str, dict[str, str]]:
    """{WAN: {sysctl key: value}} that keel holds on each WAN:
    - ipv6 = "auto": accept_ra 2 (RAs taken although forwarding is on: the
      default route and SLAAC come from them), autoconf 1 (SLAAC address);
    - ipv6 = "off": accept_ra 0 (no RA sets a route or an address);
    - proxy_ndp 1 on a hub with ipv6.ndp_proxy, else 0."""
    out: dict[str, dict[str, str]] = {}
    proxy = "1" if ndp_proxy_on(model) else "0"
    for wan in model.wans:
        conf = f"net.ipv6.conf.{wan.interface}."
        wanted = ({conf + "accept_ra": "2", conf + "autoconf": "1"} if wan.ipv6 == "auto"
                  else {conf + "accept_ra": "0"})
        wanted[conf + "proxy_ndp"] = proxy
        out[wan.interface] = wanted
    return out


def ndp_proxy_on(model: RouterModel) -> bool:
    return bool(model.ipv6.ndp_proxy and model.ipv6.routed_prefix and model.wireguard)


def routed_peer_prefixes(tunnel: WireGuard, routed_prefix: str | None) -> tuple[str, ...]:
    """The peers' IPv6 allowed_ips inside the hub's routed prefix, each
    once, in the config's order: routed into the tunnel on the hub."""
    if not routed_prefix:
        return ()
    outer = ipaddress.ip_network(routed_prefix, strict=False)
    found: list[str] = []
    for peer in tunnel.peer:
        for allowed in peer.allowed_ips:
            net = ipaddress.ip_network(allowed, strict=False)
            if (isinstance(net, IPv6Net) and isinstance(outer, IPv6Net)
                    and net.subnet_of(outer) and str(net) not in found):
                found.append(str(net))
    return tuple(found)


def ndp_proxy_addresses(model: RouterModel) -> tuple[str, ...]:
    """The addresses the hub answers for on its WAN (ipv6.ndp_proxy): each
    peer's /128 inside the routed prefix, and the first address (::1) of
    each larger prefix there."""
    if not ndp_proxy_on(model) or model.wireguard is None:
        return ()
    out: list[str] = []
    for prefix in routed_peer_prefixes(model.wireguard, model.ipv6.routed_prefix):
        net = ipaddress.IPv6Network(prefix)
        addr = str(net.network_address if net.prefixlen == 128 else net.network_address + 1)
        if addr not in out:
            out.append(addr)
    return tuple(out)


def lan_tunnel_prefixes(model: RouterModel) -> tuple[str, ...]:
    """The /64s of the LANs' static address6 on an edge (a router whose
    tunnel has a hub: a peer with an endpoint): what comes from them goes
    into the tunnel, whatever the WAN has."""
    t = model.wireguard
    if t is None or not any(p.endpoint for p in t.peer):
        return ()
    return tuple(str(ipaddress.ip_interface(lan.address6).network)
                 for lan in model.lans if lan.address6)


def lan_addresses(model: RouterModel) -> dict[str, list[str]]:
    """{LAN: addresses keel puts on it}: its IPv4 address and its static
    IPv6 /64 (address6). A /64 of the WAN's delegation is dhcpcd's."""
    return {lan.interface: [lan.address, *([lan.address6] if lan.address6 else [])]
            for lan in model.lans}

