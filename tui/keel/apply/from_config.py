"""Flatten a validated Config into the RouterModel the renderers read."""

from __future__ import annotations

from keel.config.schema import Config
from keel.render import model as m


def _overhead(value: str | int) -> str:
    if isinstance(value, int):
        return f"overhead {value}"
    if value == "none":
        return ""
    if value == "docsis":
        return "docsis"
    from keel.render.cake import OVERHEAD_PRESETS

    return f"overhead {OVERHEAD_PRESETS[value]}"


def model_from_config(cfg: Config) -> m.RouterModel:
    s = cfg.wan.shaping
    shaping = m.Shaping(download_kbit=s.download_kbit, upload_kbit=s.upload_kbit,
                        overhead=_overhead(s.overhead), diffserv=s.diffserv, nat=s.nat,
                        wash_ingress=s.wash_ingress, attach=s.attach)
    wan = m.Wan(cfg.wan.interface, dhcp=cfg.wan.mode == "dhcp", address=cfg.wan.address,
                gateway=cfg.wan.gateway, shaping=shaping)
    lans = ()
    if cfg.lan is not None:
        lans = (m.Lan(cfg.lan.interface, cfg.lan.address, cfg.lan.dhcp_start, cfg.lan.dhcp_end,
                      cfg.lan.dhcp_lease),)
    tunnel = None
    wg = cfg.wireguard
    if wg.enabled:
        tunnel = m.Tunnel(
            ifname=wg.interface, addresses=wg.address, listen_port=wg.listen_port, mtu=wg.mtu,
            peers=tuple(m.Peer(p.public_key, p.allowed_ips, p.endpoint, p.keepalive)
                        for p in wg.peer),
            route_all=wg.route == "all",
            routes=wg.prefixes if wg.route == "prefixes" else ())
    fw = cfg.firewall
    firewall = m.Firewall(allow_ssh_wan=fw.ssh_on_wan, allow_ping_wan=fw.ping_on_wan,
                          open_tcp_wan=fw.open_tcp, open_udp_wan=fw.open_udp,
                          nat=cfg.nat.masquerade_wan, nat_tunnel=cfg.nat.masquerade_tunnel,
                          tunnel_forward_wan=fw.forward_tunnel_to_wan,
                          iperf3_on_tunnel=cfg.selftest.iperf3_server)
    t = cfg.tuning
    tuning = m.Tuning(governor=t.governor, hold_latency=t.hold_latency,
                      max_latency_us=t.max_cstate_latency_us, rps=t.rps)
    return m.RouterModel(wans=(wan,), lans=lans, tunnel=tunnel, firewall=firewall,
                         tuning=tuning, hostname=cfg.system.hostname)
