"""The model: what the router should be. Built from a validated Config by
`keel.model.from_config` (tests build it directly); the renderers and apply
read it. Each field is named as the schema (keel.config.schema) names its key;
the few fields the schema does not hold are fixed by keel and say so."""

from __future__ import annotations

from dataclasses import dataclass, field

from keel.ports import METRICS_TCP


@dataclass(frozen=True)
class Shaping:
    """CAKE on one WAN (wan.shaping); a rate of 0 turns that direction off."""

    download_kbit: int = 0
    upload_kbit: int = 0
    overhead: str | int = "none"  # a preset of schema.OVERHEAD_PRESETS, or bytes
    diffserv: str = "besteffort"  # or "diffserv3", "diffserv4", "diffserv8"
    nat: bool = True
    wash_ingress: bool = True
    # where CAKE sits: "wan" (the WAN device; shapes everything, but sees the
    # whole tunnel as one flow) or "tunnel" (the WireGuard device and an IFB
    # on its ingress; sees the flows inside the tunnel). See docs/cake.md.
    attach: str = "wan"
    # adaptive: the rates above are each direction's base; keel.adaptive moves
    # them between min and max (0 where that direction is not shaped)
    adaptive: bool = False
    download_min_kbit: int = 0
    download_max_kbit: int = 0
    upload_min_kbit: int = 0
    upload_max_kbit: int = 0
    # fixed by keel, not in the schema
    ack_filter: bool = False
    rtt_ms: int = 100
    tunnel_overhead: int = 60  # bytes WireGuard adds to each packet (IPv4 endpoint)

    def bounds(self, direction: str) -> tuple[int, int, int]:
        """(min, base, max) kbit/s of "upload" or "download"; fixed shaping
        has all three equal."""
        base = self.upload_kbit if direction == "upload" else self.download_kbit
        if not self.adaptive or base <= 0:
            return base, base, base
        if direction == "upload":
            return self.upload_min_kbit, base, self.upload_max_kbit
        return self.download_min_kbit, base, self.download_max_kbit

    def accepts(self, direction: str, kbit: int) -> bool:
        """A running CAKE rate that is this config's: the rate asked for, or
        with adaptive shaping any rate between the direction's min and max."""
        low, _, high = self.bounds(direction)
        return low <= kbit <= high


@dataclass(frozen=True)
class Peer:
    public_key: str
    allowed_ips: tuple[str, ...]
    endpoint: str | None = None
    keepalive: int = 0
    name: str | None = None  # keel peers; a comment in the rendered wg config
    fleet: str | None = None  # "hub": our hub (keel.fleet.agent answers it); "edge": one of ours
    upgrade_first: bool = False  # an edge of ours keel fleet upgrade takes first, alone


@dataclass(frozen=True)
class WireGuard:
    """The tunnel; present in the model only when wireguard.enabled."""

    interface: str = "wg0"
    address: tuple[str, ...] = ()
    listen_port: int = 51820
    mtu: int = 1420
    route: str = "none"  # "none", "all" (the default route) or "prefixes"
    prefixes: tuple[str, ...] = ()  # routed through the tunnel when route = "prefixes"
    peer: tuple[Peer, ...] = ()


@dataclass(frozen=True)
class Lan:
    interface: str
    address: str  # "192.168.77.1/24"
    dhcp_start: str | None = None
    dhcp_end: str | None = None
    dhcp_lease: str = "12h"
    # IPv6 on the LAN, announced by router advertisements (SLAAC, RDNSS):
    # address6 a static /64 ("2001:db8:100:1::1/64": the hub's routed prefix,
    # handed out by pairing, routed through the tunnel); ipv6_from_wan a /64
    # of the prefix the WAN delegates (wan.ipv6 = "auto"), which may change
    address6: str | None = None
    ipv6_from_wan: bool = False


@dataclass(frozen=True)
class Wan:
    interface: str
    mode: str = "dhcp"  # or "static"
    address: str | None = None  # static "203.0.113.2/24"
    gateway: str | None = None
    shaping: Shaping = field(default_factory=Shaping)
    # "auto": SLAAC on the WAN (accept_ra = 2, forwarding on) and a prefix by
    # DHCPv6-PD (dhcpcd), of this length asked for; "off": no IPv6 on the WAN
    ipv6: str = "off"
    ipv6_pd_length: int = 56

    @property
    def dhcp(self) -> bool:
        return self.mode == "dhcp"


@dataclass(frozen=True)
class Firewall:
    ssh_on_wan: bool = False
    ping_on_wan: bool = True
    open_tcp: tuple[int, ...] = ()
    open_udp: tuple[int, ...] = ()
    forward_tunnel_to_wan: bool = False  # tunnel peers may go out of the WAN (hub)
    forward_between_peers: bool = False  # wg0 -> wg0: one peer to another (hub)


@dataclass(frozen=True)
class Nat:
    masquerade_wan: bool = True  # masquerade what leaves the WAN
    masquerade_tunnel: bool = True  # LAN hosts behind our tunnel address


@dataclass(frozen=True)
class Tuning:
    governor: str = "performance"
    hold_latency: bool = True  # hold a PM QoS request (keeps deep C-states off)
    max_cstate_latency_us: int = 3  # the request: C1's exit latency on most x86
    rps: bool = True  # spread single-queue NICs over all CPUs


@dataclass(frozen=True)
class Selftest:
    iperf3_server: bool = False  # iperf3 server on the tunnel address


@dataclass(frozen=True)
class System:
    hostname: str = "keel"


@dataclass(frozen=True)
class Access:
    ssh_keys: tuple[str, ...] = ()  # authorized_keys lines from the config


@dataclass(frozen=True)
class Forward:
    """A port forward ([[forward]]), with its role on this router, from `via`:
    - "outer": via names one of our peers (we are the hub): the public port on
      our WAN is DNATed through the tunnel to the target behind that peer;
    - "inner": via is our own host name (we are that edge): the target is in
      our LAN, the connections come through the tunnel from the hub (the peer
      with an endpoint) with the client's address, and their replies go back
      through it;
    - "local": no via: the target is in our own LAN, DNATed from our WAN."""

    name: str
    protocol: str  # "tcp", "udp" or "both"
    port_low: int  # the public port(s) on the hub's WAN
    port_high: int
    address: str  # the target's address: IPv4, or IPv6 (no DNAT: public port = target port)
    target_port: int | None  # None: the same port(s) as the public one(s)
    role: str  # "outer", "inner" or "local"
    via: str | None = None
    snat: bool = False

    @property
    def family(self) -> int:
        """4 or 6: the target's address family."""
        return 6 if ":" in self.address else 4

    @property
    def protocols(self) -> tuple[str, ...]:
        return ("tcp", "udp") if self.protocol == "both" else (self.protocol,)

    @property
    def public(self) -> str:
        """The public port(s) as nft and users write them: "8080", "8000-8010"."""
        return (str(self.port_low) if self.port_low == self.port_high
                else f"{self.port_low}-{self.port_high}")

    @property
    def target(self) -> str:
        """The target as nft writes a DNAT's: "192.168.77.50:80", or the address
        alone (the same ports)."""
        return self.address if self.target_port is None else f"{self.address}:{self.target_port}"

    @property
    def target_ports(self) -> str:
        """The port(s) the target receives on: "80", "8000-8010"."""
        return self.public if self.target_port is None else str(self.target_port)


@dataclass(frozen=True)
class Ipv6:
    """The hub's IPv6 ([ipv6]): a prefix its provider routes to it, of which
    each paired edge gets a /64 (in that peer's allowed_ips); ndp_proxy where
    the provider puts the prefix on the WAN's link instead of routing it."""

    routed_prefix: str | None = None  # "2001:db8:100::/56"
    ndp_proxy: bool = False


@dataclass(frozen=True)
class Metrics:
    """The Prometheus endpoint ([metrics]): `keel metrics-serve` on the LANs'
    and the tunnel's addresses, on every address with on_wan (the ruleset
    opens the port on the WAN then)."""

    enabled: bool = False
    port: int = METRICS_TCP
    on_wan: bool = False


@dataclass(frozen=True)
class RouterModel:
    wans: tuple[Wan, ...]
    lans: tuple[Lan, ...] = ()
    wireguard: WireGuard | None = None
    firewall: Firewall = field(default_factory=Firewall)
    nat: Nat = field(default_factory=Nat)
    tuning: Tuning = field(default_factory=Tuning)
    selftest: Selftest = field(default_factory=Selftest)
    system: System = field(default_factory=System)
    access: Access = field(default_factory=Access)
    forwards: tuple[Forward, ...] = ()
    ipv6: Ipv6 = field(default_factory=Ipv6)
    metrics: Metrics = field(default_factory=Metrics)
