"""keel.toml for the lab's edge and hub (tests and `make demo`)."""

from __future__ import annotations

from tests.lab import topology as topo

UP_KBIT, DOWN_KBIT = 8000, 16000
# the WAN's default gateway: an address on the link where nothing answers (the
# hub must not route back to the LAN through the edge, so NAT can be seen)
NO_ROUTER = "203.0.113.254"


def hub_config(edge_pub: str, *, gateway: str = NO_ROUTER, prefix: int = 24,
               edge_lan: str | None = None, extra: str = "") -> str:
    """`prefix` 32 with a gateway outside it: a VPS's on-link static WAN.
    `edge_lan`: the edge's LAN routed to it through the tunnel (as pairing
    sets it); `extra`: more tables at the end."""
    allowed = f'"{topo.EDGE_TUNNEL}/32"' + (f', "{edge_lan}"' if edge_lan else "")
    route = f'route = "prefixes"\nprefixes = ["{edge_lan}"]\n' if edge_lan else ""
    return f"""
[system]
hostname = "hub"
[wan]
interface = "eth0"
mode = "static"
address = "{topo.HUB_WAN}/{prefix}"
gateway = "{gateway}"
[wireguard]
enabled = true
address = ["{topo.HUB_TUNNEL}/24"]
{route}[[wireguard.peer]]
public_key = "{edge_pub}"
allowed_ips = [{allowed}]
name = "edge"
[firewall]
forward_tunnel_to_wan = true
[selftest]
iperf3_server = true
{extra}"""


def edge_config(hub_pub: str, *, upload: int = UP_KBIT, download: int = DOWN_KBIT,
                ssh: bool = False, address: str = topo.EDGE_WAN_DIRECT,
                gateway: str = NO_ROUTER, attach: str = "wan", shaping_extra: str = "",
                extra: str = "") -> str:
    return f"""
[system]
hostname = "edge"
[wan]
interface = "eth0"
mode = "static"
address = "{address}/24"
gateway = "{gateway}"
[wan.shaping]
download_kbit = {download}
upload_kbit = {upload}
attach = "{attach}"
{shaping_extra}[lan]
interface = "eth1"
address = "{topo.LAN_EDGE}/24"
dhcp_start = "192.168.77.100"
dhcp_end = "192.168.77.199"
[wireguard]
enabled = true
address = ["{topo.EDGE_TUNNEL}/24"]
route = "prefixes"
prefixes = ["172.31.77.0/24"]
[[wireguard.peer]]
public_key = "{hub_pub}"
endpoint = "{topo.HUB_WAN}:51820"
allowed_ips = ["{topo.HUB_TUNNEL}/32", "172.31.77.0/24"]
keepalive = 25
[firewall]
ssh_on_wan = {"true" if ssh else "false"}
{extra}"""




def configure_with_keel(rl: topo.RouterLab, edge_path: str = "/data/keel/keel.toml",
                        hub_options: dict | None = None, **edge_options) -> str:
    """Configure hub and edge with `keel apply` and wait for the tunnel's first
    handshake; returns the hub's public key. With an isp in the lab, both
    route through it."""
    edge, hub = rl.edge, rl.hub
    if rl.isp:
        edge_options = {"address": topo.EDGE_WAN_VIA_ISP, "gateway": topo.ISP_UP,
                        **edge_options}
    edge_pub, hub_pub = edge.check("keel show pubkey"), hub.check("keel show pubkey")
    hub.write_file("/data/keel/keel.toml",
                   hub_config(edge_pub, gateway=topo.ISP_CORE if rl.isp else NO_ROUTER,
                              **(hub_options or {})))
    hub.check("keel apply", 60)
    hub.check(f"ip addr replace {topo.BEHIND_HUB}/32 dev lo")  # again: no error
    edge.write_file(edge_path, edge_config(hub_pub, **edge_options))
    edge.check("keel apply" + ("" if edge_path == "/data/keel/keel.toml" else f" {edge_path}"),
               60)
    edge.check(f"ping -n -c 1 -w 30 {topo.HUB_TUNNEL}", 60)  # the first handshake
    return hub_pub
