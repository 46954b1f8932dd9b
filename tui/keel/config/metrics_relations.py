"""The rules of [metrics], run once every key is valid on its own: the port
is no other TCP port of the router's (keel's own services, a port opened on
the WAN, a forward's public port), it has somewhere to be served (a LAN, the
tunnel, or the WAN by choice), and on_wan is not set where nothing is served.

The endpoint listens on the LAN's and the tunnel's addresses (the WAN's too
with on_wan: keel.apply.metrics); a port that something else of the router
takes would either fail to bind or hand the scrape to that other service (a
forward's DNAT takes what comes for the WAN's address), so it is refused
whatever on_wan says."""

from __future__ import annotations

from collections.abc import Iterator

from keel.config.errors import Problem
from keel.config.forward_relations import LOCAL, OUTER, family, public_ports, role_of
from keel.config.schema import Config
from keel.ports import DNS, FLEET_TCP, IPERF3, PAIRING_TCP, SSH_TCP

# keel's own TCP services on the router, whatever the config says
OWN_TCP = ((SSH_TCP, "SSH"), (DNS, "DNS (dnsmasq, on the LAN)"),
           (IPERF3, "the iperf3 server (selftest.iperf3_server)"),
           (PAIRING_TCP, "pairing (keel pair)"), (FLEET_TCP, "the fleet channel (keel.fleet)"))


def port_taken(cfg: Config) -> Iterator[Problem]:
    """metrics.port is taken by nothing else of the router's: keel's own
    services, firewall.open_tcp, a forward's public TCP port(s) on this
    router's address (outer and local IPv4 forwards: the ones DNATed here).
    Reads [metrics], [firewall] and [[forward]] (each valid)."""
    m = cfg.metrics
    if not m.enabled:
        return
    where = "metrics.port"
    for port, whose in OWN_TCP:
        if m.port == port:
            yield Problem(where, f"tcp {port} is keel's own: {whose}")
    for n, port in enumerate(cfg.firewall.open_tcp):
        if m.port == port:
            yield Problem(where, f"tcp {port} is opened on the WAN for another service "
                                 f"(firewall.open_tcp[{n}]); to serve the metrics on the WAN, "
                                 "set metrics.on_wan = true instead")
    for i, fwd in enumerate(cfg.forward):
        if "tcp" not in (("tcp", "udp") if fwd.protocol == "both" else (fwd.protocol,)):
            continue
        low, high = public_ports(fwd)
        if low <= m.port <= high and family(fwd) == 4 and role_of(cfg, fwd) in (OUTER, LOCAL):
            yield Problem(where, f"tcp {m.port} is the public port of forward[{i}] "
                                 f"({fwd.name})")


def served_somewhere(cfg: Config) -> Iterator[Problem]:
    """Enabled: a LAN or the tunnel (with an address) to serve on, or the
    WAN by choice; on_wan only with enabled. Reads [metrics], [lan] and
    [wireguard] (each valid)."""
    m = cfg.metrics
    if not m.enabled:
        if m.on_wan:
            yield Problem("metrics.on_wan", "only with enabled = true")
        return
    tunnel = cfg.wireguard.enabled and bool(cfg.wireguard.address)
    if cfg.lan is None and not tunnel and not m.on_wan:
        yield Problem("metrics.enabled", "nowhere to serve: no [lan] and no tunnel "
                                         "(wireguard.enabled with an address); set "
                                         "metrics.on_wan = true to serve on the WAN")


def metrics(cfg: Config, ready: frozenset[str] | None = None) -> list[Problem]:
    """Both rules, each when the sections it reads are valid (`ready`: the
    clean sections, None for all)."""
    def clean(*sections: str) -> bool:
        return ready is None or all(s in ready for s in sections)

    out: list[Problem] = []
    if clean("metrics", "lan", "wireguard"):
        out += served_somewhere(cfg)
    if clean("metrics", "firewall", "forward", "system", "wireguard"):
        out += port_taken(cfg)
    return out
