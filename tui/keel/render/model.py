"""The flattened desired state the renderers read. `keel.apply.model_from_config`
builds it from a validated Config; tests build it directly."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Shaping:
    """CAKE on one WAN; a rate of 0 turns that direction off."""

    download_kbit: int = 0
    upload_kbit: int = 0
    overhead: str = ""  # a cake keyword ("docsis", "ethernet", ...) or "overhead N"
    diffserv: str = "besteffort"  # or "diffserv3", "diffserv4", "diffserv8"
    nat: bool = True
    wash_ingress: bool = True
    ack_filter: bool = False
    rtt_ms: int = 100
    # where CAKE sits: "wan" (the WAN device; shapes everything, but sees the
    # whole tunnel as one flow) or "tunnel" (the WireGuard device and an IFB
    # on its ingress; sees the flows inside the tunnel). See README.
    attach: str = "wan"
    tunnel_overhead: int = 60  # bytes WireGuard adds to each packet (IPv4 endpoint)


@dataclass(frozen=True)
class Peer:
    public_key: str
    allowed_ips: tuple[str, ...]
    endpoint: str | None = None
    keepalive: int = 0


@dataclass(frozen=True)
class Tunnel:
    ifname: str = "wg0"
    addresses: tuple[str, ...] = ()
    listen_port: int = 51820
    mtu: int = 1420
    peers: tuple[Peer, ...] = ()
    route_all: bool = False  # default route through the tunnel
    routes: tuple[str, ...] = ()  # prefixes through the tunnel (when not route_all)


@dataclass(frozen=True)
class Lan:
    ifname: str
    address: str  # "192.168.77.1/24"
    dhcp_start: str | None = None
    dhcp_end: str | None = None
    dhcp_lease: str = "12h"


@dataclass(frozen=True)
class Wan:
    ifname: str
    dhcp: bool = True
    address: str | None = None  # static "203.0.113.2/24"
    gateway: str | None = None
    shaping: Shaping = field(default_factory=Shaping)


@dataclass(frozen=True)
class Firewall:
    allow_ssh_wan: bool = False
    allow_ping_wan: bool = True
    open_tcp_wan: tuple[int, ...] = ()
    open_udp_wan: tuple[int, ...] = ()
    nat: bool = True  # masquerade what leaves the WAN
    nat_tunnel: bool = True  # masquerade LAN hosts behind our tunnel address
    tunnel_forward_wan: bool = False  # tunnel peers may go out of the WAN (hub)
    iperf3_on_tunnel: bool = False  # iperf3 server on the tunnel address


@dataclass(frozen=True)
class Tuning:
    governor: str = "performance"
    hold_latency: bool = True  # hold a PM QoS request (keeps deep C-states off)
    max_latency_us: int = 3  # the request: C1's exit latency on most x86
    rps: bool = True  # spread single-queue NICs over all CPUs


@dataclass(frozen=True)
class RouterModel:
    wans: tuple[Wan, ...]
    lans: tuple[Lan, ...] = ()
    tunnel: Tunnel | None = None
    firewall: Firewall = field(default_factory=Firewall)
    tuning: Tuning = field(default_factory=Tuning)
    hostname: str = "keel"
