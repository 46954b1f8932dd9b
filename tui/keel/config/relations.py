"""The rules that tie keys together, run once every key is valid on its own:
a static WAN has an address and a gateway, the DHCP range lies in the LAN,
peers are unique and their allowed IPs do not overlap, what is routed through
the tunnel has a peer to go to, settings that would be silently ignored."""

from __future__ import annotations

import ipaddress
from collections.abc import Iterator

from keel.config.errors import Problem
from keel.config.schema import Config, Lan, Wan, WireGuard

Network = ipaddress.IPv4Network | ipaddress.IPv6Network


def _wan(wan: Wan) -> Iterator[Problem]:
    if wan.mode == "static":
        if not wan.address:
            yield Problem("wan.address", "missing: mode is static")
        if not wan.gateway:
            yield Problem("wan.gateway", "missing: mode is static (the default route)")
    else:
        for name in ("address", "gateway"):
            if getattr(wan, name):
                yield Problem(f"wan.{name}", "only for mode = static (mode is dhcp)")
    if wan.address and wan.gateway:
        net = ipaddress.ip_interface(wan.address).network
        gateway = ipaddress.ip_address(wan.gateway)
        if gateway.version != net.version:
            yield Problem("wan.gateway",
                          f"not the same IP version as wan.address (IPv{net.version})")
        elif gateway not in net and not gateway.is_link_local:
            yield Problem("wan.gateway", f"not inside {net}")


def _lan(lan: Lan) -> Iterator[Problem]:
    iface = ipaddress.ip_interface(lan.address)
    net = iface.network
    if (lan.dhcp_start is None) != (lan.dhcp_end is None):
        yield Problem("lan.dhcp_end", "give both dhcp_start and dhcp_end, or neither")
        return
    if lan.dhcp_start is None or lan.dhcp_end is None:
        return
    ends = {"dhcp_start": ipaddress.ip_address(lan.dhcp_start),
            "dhcp_end": ipaddress.ip_address(lan.dhcp_end)}
    inside = True
    for name, addr in ends.items():
        if addr not in net:
            yield Problem(f"lan.{name}", f"not inside the LAN {net}")
            inside = False
        elif net.version == 4 and net.prefixlen < 31 and addr in (
                net.network_address, net.broadcast_address):
            yield Problem(f"lan.{name}", f"is the network or broadcast address of {net}")
            inside = False
    if not inside:
        return
    if ends["dhcp_start"] > ends["dhcp_end"]:
        yield Problem("lan.dhcp_end", "comes before dhcp_start")
    elif ends["dhcp_start"] <= iface.ip <= ends["dhcp_end"]:
        yield Problem("lan.address", "inside the DHCP range dhcp_start..dhcp_end")


def _peers(wg: WireGuard) -> Iterator[Problem]:
    seen_keys: dict[str, int] = {}
    seen_nets: list[tuple[int, Network]] = []
    for i, peer in enumerate(wg.peer):
        if peer.public_key in seen_keys:
            yield Problem(f"wireguard.peer[{i}].public_key",
                          f"duplicate of wireguard.peer[{seen_keys[peer.public_key]}]")
        seen_keys.setdefault(peer.public_key, i)
        if not peer.allowed_ips:
            yield Problem(f"wireguard.peer[{i}].allowed_ips", "empty: nothing would reach "
                                                              "this peer")
        for j, allowed in enumerate(peer.allowed_ips):
            net = ipaddress.ip_network(allowed)
            for other, onet in seen_nets:
                if net.version == onet.version and net.overlaps(onet):
                    where = "earlier in this peer" if other == i else f"wireguard.peer[{other}]"
                    yield Problem(f"wireguard.peer[{i}].allowed_ips[{j}]",
                                  f"overlaps {onet} of {where}")
                    break
            seen_nets.append((i, net))


def _covers(outer: Network, inner: Network) -> bool:
    return outer.version == inner.version and inner.subnet_of(outer)  # type: ignore[arg-type]


def _routes(wg: WireGuard) -> Iterator[Problem]:
    allowed = [ipaddress.ip_network(a) for p in wg.peer for a in p.allowed_ips]
    if wg.route == "all":
        if not any(n.prefixlen == 0 for n in allowed):
            yield Problem("wireguard.route", "all, but no peer has 0.0.0.0/0 (or ::/0) in "
                                             "allowed_ips: WireGuard would drop the traffic")
    elif wg.route == "prefixes" and not wg.prefixes:
        yield Problem("wireguard.prefixes", "missing: route = prefixes")
    elif wg.route != "prefixes" and wg.prefixes:
        yield Problem("wireguard.prefixes", f"only used with route = prefixes (route is "
                                            f"{wg.route})")
    if wg.route != "prefixes":
        return
    for i, text in enumerate(wg.prefixes):
        net = ipaddress.ip_network(text)
        if not any(_covers(a, net) for a in allowed):
            yield Problem(f"wireguard.prefixes[{i}]", "no peer's allowed_ips cover it: "
                                                      "WireGuard would drop the traffic")


def _wireguard(cfg: Config) -> Iterator[Problem]:
    wg = cfg.wireguard
    if not wg.enabled:
        if cfg.wan.shaping.attach == "tunnel":
            yield Problem("wan.shaping.attach", "tunnel, but wireguard is not enabled")
        if cfg.selftest.iperf3_server:
            yield Problem("selftest.iperf3_server", "needs wireguard enabled")
        if cfg.firewall.forward_tunnel_to_wan:
            yield Problem("firewall.forward_tunnel_to_wan", "needs wireguard enabled")
        return
    if not wg.address:
        yield Problem("wireguard.address", "missing: the tunnel needs an address")
    yield from _peers(wg)
    yield from _routes(wg)


def _subnets(cfg: Config) -> Iterator[Problem]:
    """The LAN, the WAN and the tunnel are different subnets."""
    nets: list[tuple[str, Network]] = []
    if cfg.wan.address:
        nets.append(("wan.address", ipaddress.ip_interface(cfg.wan.address).network))
    if cfg.lan is not None:
        nets.append(("lan.address", ipaddress.ip_interface(cfg.lan.address).network))
    if cfg.wireguard.enabled:
        nets += [(f"wireguard.address[{i}]", ipaddress.ip_interface(a).network)
                 for i, a in enumerate(cfg.wireguard.address)]
    for k, (path, net) in enumerate(nets):
        for other, onet in nets[:k]:
            if net.version == onet.version and net.overlaps(onet):
                yield Problem(path, f"overlaps {other} ({onet})")
                break


def _interfaces(cfg: Config) -> Iterator[Problem]:
    names = {"wan.interface": cfg.wan.interface}
    if cfg.lan is not None:
        names["lan.interface"] = cfg.lan.interface
    if cfg.wireguard.enabled:
        names["wireguard.interface"] = cfg.wireguard.interface
    by_name: dict[str, str] = {}
    for path, name in names.items():
        if name in by_name:
            yield Problem(path, f"same interface as {by_name[name]}")
        by_name.setdefault(name, path)


def cross_checks(cfg: Config, clean: frozenset[str] | None = None) -> list[Problem]:
    """Problems between keys. `clean` names the top-level sections that are
    valid on their own (default: all); a rule runs only when every section it
    reads is clean, so a bad value elsewhere never causes a second, false one."""
    def ready(*sections: str) -> bool:
        return clean is None or all(s in clean for s in sections)

    out: list[Problem] = []
    if ready("wan"):
        out += _wan(cfg.wan)
    if ready("lan") and cfg.lan is not None:
        out += _lan(cfg.lan)
    if ready("wireguard", "wan", "firewall", "selftest"):
        out += _wireguard(cfg)
    if ready("wan", "lan", "wireguard"):
        out += [*_interfaces(cfg), *_subnets(cfg)]
    return out
