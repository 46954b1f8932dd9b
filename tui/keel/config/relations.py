"""The rules that tie keys together, run once every key is valid on its own:
a static WAN has an address and a usable gateway, the DHCP range lies in the
LAN, the LAN, WAN and tunnel are apart, settings that would be silently
ignored; the tunnel's own rules are in wireguard_relations.py, the port
forwards' in forward_relations.py, IPv6's in ipv6_relations.py, the metrics
endpoint's in metrics_relations.py."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from keel.adaptive import target
from keel.config import forward_relations as forwards
from keel.config import ipv6_relations as ipv6
from keel.config import metrics_relations
from keel.config import wireguard_relations as tunnel
from keel.config.errors import Problem
from keel.config.netsets import Address, Interface, Network, address, interface
from keel.config.nic_spec import parse_spec
from keel.config.schema import Config, Lan, Wan


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
        yield from _gateway(interface(wan.address), address(wan.gateway))


def _adaptive(cfg: Config) -> Iterator[Problem]:
    """Adaptive CAKE: each shaped direction has 0 < min <= base <= max, and
    the tunnel has a peer to probe (one this router reaches: an endpoint)
    over IPv4 (keel.adaptive.target: the probes are IPv4 only)."""
    s = cfg.wan.shaping
    if not s.adaptive:
        for d in ("download", "upload"):
            for end in ("min", "max"):
                if getattr(s, f"{d}_{end}_kbit"):
                    yield Problem(f"wan.shaping.{d}_{end}_kbit", "only with adaptive = true")
        return
    if s.download_kbit <= 0 and s.upload_kbit <= 0:
        yield Problem("wan.shaping.adaptive", "no rate to adapt: download_kbit and "
                                              "upload_kbit are both 0 (off)")
    for d in ("download", "upload"):
        base = getattr(s, f"{d}_kbit")
        low, high = getattr(s, f"{d}_min_kbit"), getattr(s, f"{d}_max_kbit")
        if base <= 0:
            # each bound the file sets is named, and only those
            for end, value in (("min", low), ("max", high)):
                if value:
                    yield Problem(f"wan.shaping.{d}_{end}_kbit", f"{d} is not shaped "
                                                                  f"({d}_kbit = 0)")
            continue
        if low <= 0:
            yield Problem(f"wan.shaping.{d}_min_kbit", "missing: adaptive = true "
                                                        f"(at most {d}_kbit = {base})")
        elif low > base:
            yield Problem(f"wan.shaping.{d}_min_kbit", f"{low} is above the base "
                                                        f"{d}_kbit = {base}")
        if high <= 0:
            yield Problem(f"wan.shaping.{d}_max_kbit", "missing: adaptive = true "
                                                        f"(at least {d}_kbit = {base})")
        elif high < base:
            yield Problem(f"wan.shaping.{d}_max_kbit", f"{high} is below the base "
                                                        f"{d}_kbit = {base}")
    wg = cfg.wireguard
    if not wg.enabled or not any(p.endpoint for p in wg.peer):
        yield Problem("wan.shaping.adaptive", "needs the tunnel: its peer answers the delay "
                                              "probes (wireguard.enabled, a peer with an "
                                              "endpoint)")
    elif target.probe_source(wg.address) is None:
        yield Problem("wan.shaping.adaptive", "the delay probes are IPv4, and "
                                              "wireguard.address has no IPv4 address (an "
                                              "IPv6-only tunnel cannot run adaptive CAKE)")
    elif target.probed_peer(wg.peer) is None:
        yield Problem("wan.shaping.adaptive", "the delay probes are IPv4: the peer with an "
                                              "endpoint needs its IPv4 tunnel address, a "
                                              "single address (/32), in allowed_ips")


def _gateway(iface: Interface, gateway: Address) -> Iterator[Problem]:
    """A gateway inside the WAN subnet, or anywhere on the link when the
    address is a single host (/32, /128: a VPS's on-link gateway) or the
    gateway is link-local."""
    net = iface.network
    if gateway.version != net.version:
        yield Problem("wan.gateway", f"not the same IP version as wan.address (IPv{net.version})")
    elif gateway == iface.ip:
        yield Problem("wan.gateway", "is the router's own address (wan.address)")
    elif gateway not in net:
        if net.prefixlen < net.max_prefixlen and not gateway.is_link_local:
            yield Problem("wan.gateway", f"not inside {net}")
    elif net.version == 4 and net.prefixlen < 31 and gateway in (net.network_address,
                                                                 net.broadcast_address):
        which = "network" if gateway == net.network_address else "broadcast"
        yield Problem("wan.gateway", f"is the {which} address of {net}, not a host")


def _lan(lan: Lan) -> Iterator[Problem]:
    iface = interface(lan.address)
    net = iface.network
    if net.version == 6:
        yield Problem("lan.address", "an IPv6 address: lan.address is the IPv4 LAN (DHCPv4); "
                                     "the LAN's IPv6 address goes in lan.address6 (a /64, like "
                                     "2001:db8:100:1::1/64)")
        return
    if (lan.dhcp_start is None) != (lan.dhcp_end is None):
        yield Problem("lan.dhcp_end", "give both dhcp_start and dhcp_end, or neither")
        return
    if lan.dhcp_start is None or lan.dhcp_end is None:
        return
    ends = {"dhcp_start": address(lan.dhcp_start),
            "dhcp_end": address(lan.dhcp_end)}
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


def _subnets(cfg: Config) -> Iterator[Problem]:
    """The LAN, the WAN and the tunnel are different subnets."""
    nets: list[tuple[str, Network]] = []
    if cfg.wan.address:
        nets.append(("wan.address", interface(cfg.wan.address).network))
    if cfg.lan is not None:
        nets.append(("lan.address", interface(cfg.lan.address).network))
        if cfg.lan.address6 is not None:
            nets.append(("lan.address6", interface(cfg.lan.address6).network))
    if cfg.wireguard.enabled:
        nets += [(f"wireguard.address[{i}]", interface(a).network)
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
        with contextlib.suppress(ValueError):  # each key's own check named a bad one
            name = parse_spec(name).text  # mac:AA:.. and mac:aa:.. are one NIC
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
        out += [*_wan(cfg.wan), *ipv6.wan(cfg)]
    if ready("lan") and cfg.lan is not None:
        out += _lan(cfg.lan)
    if ready("wan", "wireguard"):
        out += _adaptive(cfg)
    if ready("wireguard", "wan", "firewall", "selftest"):
        out += tunnel.wireguard(cfg)
    if ready("wan", "lan", "wireguard"):
        out += [*_interfaces(cfg), *_subnets(cfg), *tunnel.tunnel_and_links(cfg),
                *ipv6.lan(cfg)]
    if ready("ipv6", "wireguard", "wan"):
        out += ipv6.routed(cfg)
    if ready("forward"):
        out += forwards.names_and_ranges(cfg)
    if ready("forward", "system", "wireguard", "lan", "firewall", "ipv6"):
        out += forwards.forwards(cfg)
    out += metrics_relations.metrics(cfg, clean)
    return out
