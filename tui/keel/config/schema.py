"""The one schema of keel.toml: frozen dataclasses with defaults, and per key a
declarative Rule (type from the annotation; range, allowed values, a named
syntax, a unit) and a description. The loader, `keel config show`, the docs
and the UI all read this module; no check is written anywhere else."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from keel.ports import METRICS_TCP

RATE_MAX_KBIT = 100_000_000  # 100 Gbit/s

# CAKE overhead presets (bytes added to every packet), from the field
# (OpenWrt sqm-scripts, CAKE's own keywords). "docsis" is passed to CAKE as its
# keyword (18 bytes, MPU 64); the others as `overhead N`.
OVERHEAD_PRESETS: dict[str, int] = {
    "none": 0,            # no overhead compensation
    "ethernet": 38,       # plain Ethernet: preamble, header, FCS, inter-frame gap
    "docsis": 18,         # cable (cake keyword `docsis`)
    "pppoe-vdsl": 34,     # VDSL2 PTM + PPPoE + VLAN
    "pppoe-ptm": 30,      # cake keyword pppoe-ptm
    "bridged-ptm": 22,    # cake keyword bridged-ptm
    "conservative": 48,   # unknown link: a safe upper bound
}
OVERHEAD_BYTES = (-64, 256)

GOVERNORS = ("performance", "schedutil", "ondemand", "powersave", "conservative")


@dataclass(frozen=True)
class Rule:
    """What one value may be. `syntax` names a check in keel.config.checks
    (ifname, ifname_or_identity, hostname, address, prefix, interface_address, interface_address6,
    prefix6, wg_key, endpoint, lease, ssh_public_key, port_range,
    forward_target; port_range judges an integer too); `low`..`high` bound
    integers; `choices` lists the allowed strings; `most` bounds the number of
    elements of an array (every array has one: a file cannot grow a list
    without end)."""

    syntax: str | None = None
    low: int | None = None
    high: int | None = None
    choices: tuple[str, ...] = ()
    unit: str = ""
    most: int | None = None

    def describe(self) -> str:
        parts = []
        if self.choices:
            parts.append("one of " + ", ".join(self.choices))
        if self.low is not None and self.high is not None:
            parts.append(f"{self.low}..{self.high}" + (f" {self.unit}" if self.unit else ""))
        elif self.unit:
            parts.append(self.unit)
        if self.syntax:
            parts.append(self.syntax.replace("_", " "))
        if self.most is not None:
            parts.append(f"at most {self.most}")
        return "; ".join(parts)


ANY = Rule()
SECRET_WORDS = ("private", "secret", "preshared", "psk")


def key(default: Any, doc: str, rule: Rule = ANY, *, item: Rule | None = None) -> Any:
    """A key with a default. `item` is the rule of each element of an array."""
    meta = {"doc": doc, "rule": rule, "item": item, "required": False}
    if isinstance(default, (list, tuple)):
        return field(default=tuple(default), metadata=meta)
    return field(default=default, metadata=meta)


def required(doc: str, rule: Rule = ANY, *, item: Rule | None = None) -> Any:
    return field(metadata={"doc": doc, "rule": rule, "item": item, "required": True})


def section(cls: type, doc: str) -> Any:
    return field(default_factory=cls, metadata={"doc": doc, "rule": ANY, "item": None,
                                                "required": False})


def between(low: int, high: int, unit: str = "") -> Rule:
    return Rule(low=low, high=high, unit=unit)


def one_of(*choices: str) -> Rule:
    return Rule(choices=choices)


def syntax(name: str) -> Rule:
    return Rule(syntax=name)


def at_most(count: int) -> Rule:
    """An array of at most `count` elements."""
    return Rule(most=count)


# The bounds of the arrays a config can grow. Each is far above what a real
# router holds, and low enough that the largest file loads in well under a
# second (docs/configuration.md: a hub of 3000 peers checks in about 0.35 s).
# - a hub's edges: the benchmark's 3000 with a third to spare (1 MiB of TOML,
#   the file's own bound, holds about 6000 peers of pairing's shape)
MAX_PEERS = 4096
# - what a peer routes: pairing gives 2 or 3 (tunnel /32, its LAN, its /64)
MAX_ALLOWED_IPS = 256
# - the tunnel's own addresses: one of each family, with room
MAX_TUNNEL_ADDRESSES = 16
# - the prefixes a hub routes into its tunnel: pairing adds each edge's LAN
#   and /64, two for every peer
MAX_PREFIXES = 2 * MAX_PEERS
# - port forwards: each takes public ports of the hub's one address; a
#   thousand is far past a home's or an office's
MAX_FORWARDS = 1024
# - ports opened on the router itself, each protocol
MAX_OPEN_PORTS = 1024
# - SSH keys: a team's; each line is at most 1 KiB
MAX_SSH_KEYS = 256

PORT = between(1, 65535)
RATE = between(0, RATE_MAX_KBIT, "kbit/s")
IFNAME = syntax("ifname")
# a NIC by its kernel name or by what it is (keel.config.nic_spec)
NIC = syntax("ifname_or_identity")


@dataclass(frozen=True)
class System:
    hostname: str = key("keel", "the router's host name", syntax("hostname"))


@dataclass(frozen=True)
class Shaping:
    download_kbit: int = key(0, "CAKE rate from the internet (ingress, via ifb4<wan>); "
                                "0 = off", RATE)
    upload_kbit: int = key(0, "CAKE rate to the internet (egress); 0 = off", RATE)
    overhead: str | int = key(
        "ethernet", "per-packet overhead: a preset name or a number of bytes",
        Rule(choices=tuple(OVERHEAD_PRESETS), low=OVERHEAD_BYTES[0], high=OVERHEAD_BYTES[1],
             unit="bytes"))
    diffserv: str = key("besteffort", "CAKE tins: besteffort (one tin) or diffserv3/4/8",
                        one_of("besteffort", "diffserv3", "diffserv4", "diffserv8"))
    nat: bool = key(True, "fairness per host behind NAT (dual-srchost / dual-dsthost)")
    wash_ingress: bool = key(True, "clear DSCP marks coming from the internet")
    attach: str = key("wan", "where CAKE sits: wan (everything on the WAN) or tunnel "
                             "(wg0 + ifb4wg0: sees the flows inside WireGuard)",
                      one_of("wan", "tunnel"))
    adaptive: bool = key(False, "follow the line: CAKE's rates adapted from one-way delay "
                                "through the tunnel to its peer, between the min and max "
                                "below; the rates above are the base (docs/cake.md)")
    download_min_kbit: int = key(0, "adaptive: the lowest download rate", RATE)
    download_max_kbit: int = key(0, "adaptive: the highest download rate (the measured line)",
                                 RATE)
    upload_min_kbit: int = key(0, "adaptive: the lowest upload rate", RATE)
    upload_max_kbit: int = key(0, "adaptive: the highest upload rate (the measured line)", RATE)


@dataclass(frozen=True)
class Wan:
    interface: str = key("eth0", "the WAN's NIC: eth0, mac:<permanent MAC> or "
                                 "pci:<PCI function>", NIC)
    mode: str = key("dhcp", "how the WAN gets its address", one_of("dhcp", "static"))
    address: str | None = key(None, "static address with prefix, like 203.0.113.2/24 "
                                    "(mode = static)", syntax("interface_address"))
    gateway: str | None = key(None, "static default gateway (mode = static)",
                              syntax("address"))
    ipv6: str = key("auto", "IPv6 on the WAN: auto (SLAAC, and a prefix by DHCPv6-PD) or "
                            "off (none)", one_of("auto", "off"))
    ipv6_pd_length: int = key(56, "the delegated prefix length asked for (ipv6 = auto)",
                              between(48, 64, "bits"))
    shaping: Shaping = section(Shaping, "CAKE on this WAN, both directions")


@dataclass(frozen=True)
class Lan:
    interface: str = key("eth1", "the LAN's NIC, as wan.interface (not here: no LAN "
                                 "service)", NIC)
    address: str = key("192.168.77.1/24", "the router's LAN address with prefix",
                       syntax("interface_address"))
    dhcp_start: str | None = key("192.168.77.100", "first address handed out by DHCP",
                                 syntax("address"))
    dhcp_end: str | None = key("192.168.77.199", "last address handed out by DHCP",
                               syntax("address"))
    dhcp_lease: str = key("12h", "DHCP lease time (like 12h, 30m, infinite)", syntax("lease"))
    address6: str | None = key(None, "the router's LAN IPv6 address with its /64, like "
                                     "2001:db8:100:1::1/64: a /64 of the hub's routed prefix, "
                                     "routed through the tunnel (the hub peer needs \"::/0\" "
                                     "in allowed_ips); announced to the LAN (SLAAC)",
                               syntax("interface_address6"))
    ipv6_from_wan: bool = key(True, "a /64 of the prefix the WAN delegates, announced to the "
                                    "LAN (with wan.ipv6 = auto; it may change when the "
                                    "provider renumbers)")


@dataclass(frozen=True)
class Peer:
    public_key: str = required("the peer's public key (base64, 32 bytes)", syntax("wg_key"))
    allowed_ips: tuple[str, ...] = required("prefixes this peer may send from and is sent",
                                            at_most(MAX_ALLOWED_IPS), item=syntax("prefix"))
    endpoint: str | None = key(None, "host:port or [IPv6]:port to reach the peer "
                                     "(leave out when the peer reaches us)",
                               syntax("endpoint"))
    keepalive: int = key(0, "persistent keepalive; 0 = off", between(0, 65535, "s"))
    name: str | None = key(None, "a name for the peer (keel peers; pairing sets it)",
                           syntax("hostname"))
    fleet: str | None = key(None, "this peer's part in the fleet (keel pair sets it): hub "
                                  "(it may read this router's status and give it routes to "
                                  "the other edges' private LANs, through the tunnel) or edge "
                                  "(one this hub asks and gives routes); left out: none",
                            one_of("hub", "edge"))
    upgrade_first: bool = key(False, "(a hub's edge, fleet = edge) upgraded first and alone "
                                     "by keel fleet upgrade, before the others: the least "
                                     "important site (keel fleet upgrade --first overrides)")


@dataclass(frozen=True)
class WireGuard:
    enabled: bool = key(False, "run the WireGuard tunnel (the private key is kept in "
                               "/data/keel/wireguard.key, made on first boot)")
    interface: str = key("wg0", "the tunnel interface", IFNAME)
    address: tuple[str, ...] = key((), "the router's tunnel addresses with prefix",
                                   at_most(MAX_TUNNEL_ADDRESSES),
                                   item=syntax("interface_address"))
    listen_port: int = key(51820, "UDP port to listen on (opened on the WAN)", PORT)
    mtu: int = key(1420, "tunnel MTU: the underlay's MTU - 80", between(1280, 9000, "bytes"))
    route: str = key("none", "what goes through the tunnel: none (only the tunnel's own "
                             "subnet, from address), all (the default route), or prefixes",
                     one_of("none", "all", "prefixes"))
    prefixes: tuple[str, ...] = key((), "prefixes routed through the tunnel "
                                        "(route = prefixes)", at_most(MAX_PREFIXES),
                                    item=syntax("prefix"))
    peer: tuple[Peer, ...] = key((), "peers, one [[wireguard.peer]] table each",
                                 at_most(MAX_PEERS))


@dataclass(frozen=True)
class Ipv6:
    routed_prefix: str | None = key(None, "the hub's IPv6 prefix (/32 to /64, like "
                                          "2001:db8:100::/56) its provider routes to it; "
                                          "each edge's LAN is a /64 of it, in that peer's "
                                          "allowed_ips", syntax("prefix6"))
    ndp_proxy: bool = key(False, "the provider puts routed_prefix on the WAN's link instead "
                                 "of routing it to the hub: the hub answers neighbor "
                                 "solicitations for the edges' addresses on the WAN")


@dataclass(frozen=True)
class Firewall:
    ssh_on_wan: bool = key(False, "allow SSH (tcp 22) from the WAN; everything else "
                                  "inbound on the WAN is dropped, except the WireGuard port")
    ping_on_wan: bool = key(True, "answer pings on the WAN (rate limited)")
    open_tcp: tuple[int, ...] = key((), "more TCP ports open on the WAN",
                                    at_most(MAX_OPEN_PORTS), item=PORT)
    open_udp: tuple[int, ...] = key((), "more UDP ports open on the WAN",
                                    at_most(MAX_OPEN_PORTS), item=PORT)
    forward_tunnel_to_wan: bool = key(False, "tunnel peers may reach the internet through "
                                             "this router (the hub)")
    forward_between_peers: bool = key(False, "tunnel peers may reach each other through this "
                                             "router (a hub between sites; pairing sets it)")


@dataclass(frozen=True)
class Nat:
    masquerade_wan: bool = key(True, "masquerade what leaves by the WAN")
    masquerade_tunnel: bool = key(True, "LAN hosts appear as the router's tunnel address")


@dataclass(frozen=True)
class Tuning:
    governor: str = key("performance", "cpufreq governor on every CPU policy",
                        one_of(*GOVERNORS))
    hold_latency: bool = key(True, "hold a /dev/cpu_dma_latency request (PM QoS) to keep "
                                   "deep C-states off")
    max_cstate_latency_us: int = key(3, "C-state cap: the deepest exit latency allowed",
                                     between(0, 100_000, "us"))
    rps: bool = key(True, "spread single-queue NICs over all CPUs (RPS/XPS masks)")


@dataclass(frozen=True)
class Selftest:
    iperf3_server: bool = key(False, "run an iperf3 server bound to the tunnel address "
                                     "only (the hub end)")


@dataclass(frozen=True)
class Access:
    ssh_keys: tuple[str, ...] = key((), "SSH public keys that may log in as root, one "
                                        "authorized_keys line each (public keys are not "
                                        "secrets); password logins over SSH stay off",
                                    at_most(MAX_SSH_KEYS), item=syntax("ssh_public_key"))


@dataclass(frozen=True)
class Metrics:
    enabled: bool = key(False, "serve metrics for Prometheus (keel metrics-serve, GET /metrics) "
                               "on the LAN's and the tunnel's addresses (docs/history.md)")
    port: int = key(METRICS_TCP, "the TCP port it listens on (9586: the WireGuard "
                                 "exporters' port, whose metric names keel keeps)", PORT)
    on_wan: bool = key(False, "serve it on the WAN too: the port opened there to anyone "
                              "(the metrics name peers, addresses and the version)")


@dataclass(frozen=True)
class Forward:
    name: str = required("a name for the forward (keel forwards shows it)", syntax("hostname"))
    port: str | int = required("the public port on the hub's WAN, or a range like "
                               "\"8000-8010\" (an IPv6 target: the port opened to it)",
                               syntax("port_range"))
    to: str = required("the target: address:port, or the address alone for the same "
                       "port(s) as the public one(s); IPv6: [address]:port or the address "
                       "alone, not translated (its port is the public one)",
                       syntax("forward_target"))
    protocol: str = key("tcp", "tcp, udp or both", one_of("tcp", "udp", "both"))
    via: str | None = key(None, "the edge the target is behind (its peer name; on that "
                                "edge, its own host name); leave out for a target in this "
                                "router's own LAN", syntax("hostname"))
    snat: bool = key(False, "the target sees the hub's tunnel address, not the client's "
                            "(for a target that cannot route back through the edge; IPv4 "
                            "targets only)")


@dataclass(frozen=True)
class Config:
    system: System = section(System, "the router")
    wan: Wan = section(Wan, "the WAN: address and shaping")
    lan: Lan | None = key(None, "the LAN (leave out on a one-NIC VPS)")
    wireguard: WireGuard = section(WireGuard, "the WireGuard tunnel")
    ipv6: Ipv6 = section(Ipv6, "the hub's IPv6: a routed prefix handed out to the edges "
                               "through the tunnel")
    firewall: Firewall = section(Firewall, "inbound rules on the WAN (default: deny)")
    nat: Nat = section(Nat, "address translation")
    tuning: Tuning = section(Tuning, "CPU tuning for latency")
    selftest: Selftest = section(Selftest, "self-test support")
    access: Access = section(Access, "who may log in over SSH (the root password is set "
                                     "from the console: keel access password)")
    metrics: Metrics = section(Metrics, "metrics for Prometheus (off by default)")
    forward: tuple[Forward, ...] = key((), "port forwards from the hub's public address, "
                                           "one [[forward]] table each; the same table on the "
                                           "hub and on the edge named by via (docs/forwards.md)",
                                       at_most(MAX_FORWARDS))


def is_secret(name: str) -> bool:
    """A key whose value must never be echoed."""
    low = name.lower()
    return any(word in low for word in SECRET_WORDS)
