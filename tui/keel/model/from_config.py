"""The one place a validated Config becomes the RouterModel."""

from __future__ import annotations

from keel.config import schema
from keel.config.forward_relations import family, public_ports, role_of, target_of
from keel.model import router as m


def _shaping(s: schema.Shaping) -> m.Shaping:
    return m.Shaping(download_kbit=s.download_kbit, upload_kbit=s.upload_kbit,
                     overhead=s.overhead, diffserv=s.diffserv, nat=s.nat,
                     wash_ingress=s.wash_ingress, attach=s.attach, adaptive=s.adaptive,
                     download_min_kbit=s.download_min_kbit,
                     download_max_kbit=s.download_max_kbit,
                     upload_min_kbit=s.upload_min_kbit, upload_max_kbit=s.upload_max_kbit)


def _wireguard(wg: schema.WireGuard) -> m.WireGuard | None:
    if not wg.enabled:
        return None
    return m.WireGuard(
        interface=wg.interface, address=wg.address, listen_port=wg.listen_port, mtu=wg.mtu,
        route=wg.route, prefixes=wg.prefixes,
        peer=tuple(m.Peer(p.public_key, p.allowed_ips, p.endpoint, p.keepalive, p.name, p.fleet,
                          p.upgrade_first) for p in wg.peer))


def _forward(cfg: schema.Config, fwd: schema.Forward) -> m.Forward:
    """A forward of a valid config (its port, target and role parsed once, by
    keel.config.forward_relations, as the loader's rules read them). An IPv6
    target's address is canonical, without brackets, and its port None: it
    is the public one (IPv6 is not translated; the loader refuses another)."""
    low, high = public_ports(fwd)
    addr, port = target_of(fwd)
    if family(fwd) == 6:
        port = None
    role = role_of(cfg, fwd)
    if role is None:
        raise ValueError(f"forward {fwd.name}: via names neither this router nor a peer")
    return m.Forward(name=fwd.name, protocol=fwd.protocol, port_low=low, port_high=high,
                     address=addr, target_port=port, role=role, via=fwd.via, snat=fwd.snat)


def model_from_config(cfg: schema.Config) -> m.RouterModel:
    w = cfg.wan
    wan = m.Wan(w.interface, mode=w.mode, address=w.address, gateway=w.gateway,
                shaping=_shaping(w.shaping), ipv6=w.ipv6, ipv6_pd_length=w.ipv6_pd_length)
    lans = ()
    if cfg.lan is not None:
        lan = cfg.lan
        # a /64 of the delegated prefix only where the WAN asks for one
        lans = (m.Lan(lan.interface, lan.address, lan.dhcp_start, lan.dhcp_end,
                      lan.dhcp_lease, address6=lan.address6,
                      ipv6_from_wan=lan.ipv6_from_wan and w.ipv6 == "auto"),)
    fw, t = cfg.firewall, cfg.tuning
    return m.RouterModel(
        wans=(wan,), lans=lans, wireguard=_wireguard(cfg.wireguard),
        firewall=m.Firewall(ssh_on_wan=fw.ssh_on_wan, ping_on_wan=fw.ping_on_wan,
                            open_tcp=fw.open_tcp, open_udp=fw.open_udp,
                            forward_tunnel_to_wan=fw.forward_tunnel_to_wan,
                            forward_between_peers=fw.forward_between_peers),
        nat=m.Nat(masquerade_wan=cfg.nat.masquerade_wan,
                  masquerade_tunnel=cfg.nat.masquerade_tunnel),
        tuning=m.Tuning(governor=t.governor, hold_latency=t.hold_latency,
                        max_cstate_latency_us=t.max_cstate_latency_us, rps=t.rps),
        selftest=m.Selftest(iperf3_server=cfg.selftest.iperf3_server),
        system=m.System(hostname=cfg.system.hostname),
        access=m.Access(ssh_keys=cfg.access.ssh_keys),
        forwards=tuple(_forward(cfg, fwd) for fwd in cfg.forward),
        ipv6=m.Ipv6(routed_prefix=cfg.ipv6.routed_prefix, ndp_proxy=cfg.ipv6.ndp_proxy),
        metrics=m.Metrics(enabled=cfg.metrics.enabled, port=cfg.metrics.port,
                          on_wan=cfg.metrics.on_wan))
