"""The lab of docs/design.md ("The lab"): `lan` client -> `edge` (keel) ->
`isp` (a bottleneck with a bloated FIFO) -> `hub` (keel, the VPS end). Without
the isp, the WAN link joins edge and hub directly.

Addresses (documentation ranges, only ever on the lab's own links):
  lan link   192.168.77.0/24   edge .1, the client by DHCP from the edge
  up link    198.51.100.0/24   edge .2, isp .1        (edge <-> isp)
  core link  203.0.113.0/24    isp .1, hub .2         (isp <-> hub; or edge .1 without isp)
  tunnel     10.77.0.0/24      hub .1, edge .2
  behind hub 172.31.77.1/32    on the hub's loopback: "the internet"
"""

from __future__ import annotations

from dataclasses import dataclass

from tests.lab.guest import Guest
from tests.lab.lab import Lab
from tests.lab.paths import LabError

HUB_WAN = "203.0.113.2"
ISP_UP = "198.51.100.1"
ISP_CORE = "203.0.113.1"
EDGE_WAN_VIA_ISP = "198.51.100.2"
EDGE_WAN_DIRECT = "203.0.113.1"
HUB_TUNNEL = "10.77.0.1"
EDGE_TUNNEL = "10.77.0.2"
BEHIND_HUB = "172.31.77.1"
LAN_EDGE = "192.168.77.1"


@dataclass(frozen=True)
class Bottleneck:
    """What the isp does to traffic: a cheap modem's line.

    The rates are low on purpose. Under software emulation every packet costs
    the lab's guests host CPU (edge, isp and hub together: about a quarter of
    a host core per Mbit/s, measured with tests/lab/busy.py's monitor): at
    12/4 Mbit/s the three saturated a 2-core host, the tunnel queued behind
    its own CPU and CAKE's grade depended on the host, not on CAKE. At 4/1.5
    they leave a core free. The FIFO stays 500 ms long at the line rate, so
    without CAKE the line is as bloated as before."""

    down_kbit: int = 4_000
    up_kbit: int = 1_500
    delay_ms: int = 10  # each way
    buffer_ms: int = 500  # the bloated FIFO, at the line rate

    def fifo_packets(self, rate_kbit: int) -> int:
        return max(10, rate_kbit * 1000 * self.buffer_ms // 1000 // (1514 * 8))

    def cake_rates(self, percent: int) -> tuple[int, int]:
        """CAKE's (download, upload) kbit/s at `percent` of the line."""
        return self.down_kbit * percent // 100, self.up_kbit * percent // 100


@dataclass
class RouterLab:
    lab: Lab
    edge: Guest
    hub: Guest
    lan: Guest | None = None
    isp: Guest | None = None
    hub_pub: str = ""  # the hub's public key, once configured

    @property
    def edge_wan_address(self) -> str:
        return EDGE_WAN_VIA_ISP if self.isp else EDGE_WAN_DIRECT


def unconfigure(guest: Guest) -> None:
    """Undo what `keel apply --boot` did with the shipped default (firewall,
    DHCP client, LAN server), for a guest the test sets up by hand."""
    guest.check("nft flush ruleset; for p in /run/keel/*.pid; do [ -f $p ] && "
                "kill $(cat $p) 2>/dev/null; done; pkill udhcpc; "
                # a lease the shipped default's DHCP client may have taken
                # from another guest's dnsmasq, with its default route
                "for i in $(ls /sys/class/net); do [ $i = lo ] || "
                "ip -4 addr flush dev $i scope global; done; "
                "ip -4 route flush scope global; true")


def setup_isp(isp: Guest, shape: Bottleneck | None = Bottleneck()) -> None:
    """Route between the two links; shape each direction with a bloated FIFO."""
    unconfigure(isp)
    up, core = isp.ifname("up"), isp.ifname("core")
    isp.check(f"ip addr add {ISP_UP}/24 dev {up} && ip link set {up} up && "
              f"ip addr add {ISP_CORE}/24 dev {core} && ip link set {core} up && "
              "sysctl -qw net.ipv4.ip_forward=1")
    if shape is None:
        return
    set_bottleneck(isp, shape)


def set_bottleneck(isp: Guest, shape: Bottleneck) -> None:
    up, core = isp.ifname("up"), isp.ifname("core")
    # towards the edge: the download; towards the hub: the upload
    for dev, rate in ((up, shape.down_kbit), (core, shape.up_kbit)):
        isp.check(f"tc qdisc replace dev {dev} root handle 1: tbf rate {rate}kbit "
                  f"burst 16k latency {shape.buffer_ms + 100}ms && "
                  f"tc qdisc replace dev {dev} parent 1:1 handle 10: netem "
                  f"delay {shape.delay_ms}ms limit {shape.fifo_packets(rate)}")


def clear_bottleneck(isp: Guest) -> None:
    """The line at the emulated NICs' own speed: no shaping, no FIFO."""
    isp.check(f"tc qdisc del dev {isp.ifname('up')} root 2>/dev/null; "
              f"tc qdisc del dev {isp.ifname('core')} root 2>/dev/null; true")


def address_wan(rl: RouterLab) -> None:
    """Static WAN addresses and default routes (no keel config involved)."""
    edge, hub = rl.edge, rl.hub
    unconfigure(edge)
    unconfigure(hub)
    if rl.isp:
        wan = edge.ifname("up")
        edge.check(f"ip addr add {EDGE_WAN_VIA_ISP}/24 dev {wan} && ip link set {wan} up && "
                   f"ip route add default via {ISP_UP}")
        hwan = hub.ifname("core")
        hub.check(f"ip addr add {HUB_WAN}/24 dev {hwan} && ip link set {hwan} up && "
                  f"ip route add default via {ISP_CORE}")
    else:
        wan, hwan = edge.ifname("core"), hub.ifname("core")
        edge.check(f"ip addr add {EDGE_WAN_DIRECT}/24 dev {wan} && ip link set {wan} up")
        hub.check(f"ip addr add {HUB_WAN}/24 dev {hwan} && ip link set {hwan} up")


def raw_tunnel(edge: Guest, hub: Guest) -> None:
    """A WireGuard tunnel set up with wg and ip alone, and iperf3 on the hub's
    tunnel address; waits for the first handshake."""
    for g, addr in ((edge, EDGE_TUNNEL), (hub, HUB_TUNNEL)):
        g.check("umask 077 && wg genkey > /run/wg.key && wg pubkey < /run/wg.key > /run/wg.pub")
        g.check(f"ip link add wg0 type wireguard && ip addr add {addr}/24 dev wg0 && "
                "ip link set wg0 mtu 1420 && wg set wg0 listen-port 51820 "
                "private-key /run/wg.key && ip link set wg0 up")
    pe, ph = edge.check("cat /run/wg.pub"), hub.check("cat /run/wg.pub")
    edge.check(f"wg set wg0 peer {ph} endpoint {HUB_WAN}:51820 "
               f"allowed-ips {HUB_TUNNEL}/32 persistent-keepalive 25")
    hub.check(f"wg set wg0 peer {pe} allowed-ips {EDGE_TUNNEL}/32")
    hub.check(f"iperf3 -s -D -B {HUB_TUNNEL}")
    edge.check(f"ping -n -c 1 -w 30 {HUB_TUNNEL}", 60)


def kernel_ticks_and_wg_bytes(guest: Guest) -> tuple[int, int]:
    """softirq + system ticks of all CPUs (/proc/stat's first line) and the
    bytes wg0 carried both ways: the tunnel's cost as the kernel counts it,
    read without keel."""
    cpu = guest.check("head -1 /proc/stat").split()
    if cpu[0] != "cpu":
        raise LabError(f"{guest.name}: /proc/stat starts with {cpu[0]!r}")
    # cpu user nice system idle iowait irq softirq ...
    ticks = int(cpu[3]) + int(cpu[7])
    nbytes = sum(int(guest.check(f"cat /sys/class/net/wg0/statistics/{c}_bytes"))
                 for c in ("rx", "tx"))
    return ticks, nbytes
