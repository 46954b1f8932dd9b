"""The one schema of keel.toml: frozen dataclasses whose field metadata carry
each key's check and description. The loader, the docs and the UI read it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from keel.config import checks as c

OVERHEAD_PRESETS = ("none", "ethernet", "docsis", "pppoe-vdsl", "pppoe-ptm", "bridged-ptm",
                    "conservative")


def key(default: Any, doc: str, check=None, item_check=None) -> Any:
    meta = {"doc": doc, "check": check, "item_check": item_check}
    if isinstance(default, (list, tuple)):
        return field(default=tuple(default), metadata=meta)
    return field(default=default, metadata=meta)


def required(doc: str, check=None, item_check=None) -> Any:
    return field(metadata={"doc": doc, "check": check, "item_check": item_check,
                           "required": True})


def section(cls: type, doc: str) -> Any:
    return field(default_factory=cls, metadata={"doc": doc})


def _overhead(value: str | int) -> str | None:
    if isinstance(value, bool):
        return "must be a preset name or a number of bytes"
    if isinstance(value, int):
        return None if -64 <= value <= 256 else "outside -64-256 bytes"
    return None if value in OVERHEAD_PRESETS else (
        "must be a number of bytes or one of: " + ", ".join(OVERHEAD_PRESETS))


@dataclass(frozen=True)
class System:
    hostname: str = key("keel", "the router's host name", c.hostname)


@dataclass(frozen=True)
class Shaping:
    download_kbit: int = key(0, "CAKE rate from the internet, kbit/s; 0 = off",
                             c.between(0, 100_000_000))
    upload_kbit: int = key(0, "CAKE rate to the internet, kbit/s; 0 = off",
                           c.between(0, 100_000_000))
    overhead: str | int = key("ethernet", "per-packet overhead: a preset or bytes", _overhead)
    diffserv: str = key("besteffort", "tins", c.one_of("besteffort", "diffserv3", "diffserv4",
                                                        "diffserv8"))
    nat: bool = key(True, "fairness per host behind NAT (dual-srchost/dsthost)")
    wash_ingress: bool = key(True, "clear DSCP marks coming from the internet")
    ecn_ingress: bool = key(True, "ECN marking from the internet side (fq_codel when off)")
    ecn_egress: bool = key(False, "ECN marking towards the internet (fq_codel when off)")
    attach: str = key("wan", "where CAKE sits: wan (everything) or tunnel (flows inside "
                             "WireGuard are seen one by one)", c.one_of("wan", "tunnel"))


@dataclass(frozen=True)
class Wan:
    interface: str = key("eth0", "the WAN interface", c.ifname)
    mode: str = key("dhcp", "dhcp or static", c.one_of("dhcp", "static"))
    address: str | None = key(None, "static address with prefix, like 203.0.113.2/24",
                              c.interface_address)
    gateway: str | None = key(None, "static default gateway", c.address)
    shaping: Shaping = section(Shaping, "CAKE on this WAN")


@dataclass(frozen=True)
class Lan:
    interface: str = key("eth1", "the LAN interface", c.ifname)
    address: str = key("192.168.77.1/24", "the router's LAN address with prefix",
                       c.interface_address)
    dhcp_start: str | None = key("192.168.77.100", "first address handed out", c.address)
    dhcp_end: str | None = key("192.168.77.199", "last address handed out", c.address)
    dhcp_lease: str = key("12h", "lease time", c.lease)


@dataclass(frozen=True)
class Peer:
    public_key: str = required("the peer's public key", c.wg_key)
    allowed_ips: tuple[str, ...] = required("prefixes routed to this peer", None, c.prefix)
    endpoint: str | None = key(None, "host:port to reach the peer (none: it reaches us)",
                               c.endpoint)
    keepalive: int = key(0, "persistent keepalive, seconds; 0 = off", c.between(0, 65535))


@dataclass(frozen=True)
class WireGuard:
    enabled: bool = key(False, "run the WireGuard tunnel")
    interface: str = key("wg0", "the tunnel interface", c.ifname)
    address: tuple[str, ...] = key((), "the router's tunnel addresses with prefix",
                                   None, c.interface_address)
    listen_port: int = key(51820, "UDP port to listen on", c.port)
    mtu: int = key(1420, "tunnel MTU (underlay MTU - 80)", c.between(1280, 9000))
    route: str = key("none", "what goes through the tunnel: none, all, or prefixes",
                     c.one_of("none", "all", "prefixes"))
    prefixes: tuple[str, ...] = key((), "prefixes routed through the tunnel (route = "
                                        "prefixes)", None, c.prefix)
    peer: tuple[Peer, ...] = key((), "peers ([[wireguard.peer]] tables)")


@dataclass(frozen=True)
class Firewall:
    ssh_on_wan: bool = key(False, "allow SSH (tcp 22) from the WAN")
    ping_on_wan: bool = key(True, "answer pings on the WAN (rate limited)")
    open_tcp: tuple[int, ...] = key((), "more TCP ports open on the WAN", None, c.port)
    open_udp: tuple[int, ...] = key((), "more UDP ports open on the WAN", None, c.port)
    forward_tunnel_to_wan: bool = key(False, "tunnel peers may reach the internet through "
                                             "this router (the hub)")


@dataclass(frozen=True)
class Nat:
    masquerade_wan: bool = key(True, "masquerade what leaves by the WAN")
    masquerade_tunnel: bool = key(True, "LAN hosts appear as the router's tunnel address")


@dataclass(frozen=True)
class Tuning:
    governor: str = key("performance", "cpufreq governor on every CPU",
                        c.one_of("performance", "schedutil", "ondemand", "powersave",
                                 "conservative"))
    hold_latency: bool = key(True, "hold a PM QoS request to keep deep C-states off")
    max_cstate_latency_us: int = key(3, "deepest C-state exit latency allowed, us",
                                     c.between(0, 100_000))
    rps: bool = key(True, "spread single-queue NICs over all CPUs (RPS/XPS)")


@dataclass(frozen=True)
class Selftest:
    iperf3_server: bool = key(False, "run an iperf3 server on the tunnel address only "
                                     "(the hub end)")


@dataclass(frozen=True)
class Config:
    system: System = section(System, "the router")
    wan: Wan = section(Wan, "the WAN")
    lan: Lan | None = key(None, "the LAN (leave out for a one-NIC VPS)")
    wireguard: WireGuard = section(WireGuard, "the WireGuard tunnel")
    firewall: Firewall = section(Firewall, "inbound rules on the WAN")
    nat: Nat = section(Nat, "address translation")
    tuning: Tuning = section(Tuning, "CPU tuning for latency")
    selftest: Selftest = section(Selftest, "self-test support")
