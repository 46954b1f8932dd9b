"""Spoofed packets at an edge's WAN, on the host, in network namespaces made
for it (nothing of the host's is touched):

    LAN host (eth1) --- edge (keel) --- the WAN's segment (eth0: a spoofer)
                          |
                         wg0 (a veth standing in for the tunnel) --- the hub

The edge is the namespace tests.unit.netns.run_in_netns made; the others are
tests.unit.render.nft_traffic's Hosts. The spoofer on the WAN's segment
sends from addresses that live inside (the hub's tunnel address, a LAN
host's, both families, and a /64 delegated to the LAN as dhcpcd puts it
there) to a UDP port the edge opens on its WAN (firewall.open_udp), so only
the ruleset's `spoofed` chain stands between them and the listener; and
legitimate sources (the internet router, and WireGuard's own port) that
must still pass. Each is sent before keel's ruleset is loaded (the spoof
works: they arrive) and after (they do not). `route` "all" puts keel's
policy routing in place (everything to the tunnel by wg-quick's fwmark
scheme), under which a reverse-path check by the routing table would have
dropped the whole internet.

`daemon_scenario` proves the adaptive daemon's receive path on its own (no
ruleset): answers forged on the WAN never reach its socket (bound to the
tunnel), and answers through the tunnel that do not echo a probe it sent
are refused; the real reflector's answers through the tunnel are taken."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from tests.unit.render.nft_traffic import Here, Host, finish

OPEN_PORT = 5000  # firewall.open_udp on the edge
WG_PORT = 51820
WAN4, NET4 = "203.0.113.1", "203.0.113.2"  # the edge's, the internet router's
WAN6, NET6 = "2001:db8:ff::1", "2001:db8:ff::2"
TUN4, HUB4 = "10.77.0.2", "10.77.0.1"
TUN6, HUB6 = "fd77::2", "fd77::1"
LAN4, LAN6 = "192.168.77.1", "2001:db8:1::1"
DELEGATED = "2001:db8:120::1/64"  # on eth1 with a lifetime: dhcpcd's, not in the config
# (name, source on the WAN's segment, destination on the edge, port, must pass)
SENDS = (
    ("hub tunnel v4", HUB4, WAN4, OPEN_PORT, False),
    ("hub tunnel v4 to the tunnel address", HUB4, TUN4, OPEN_PORT, False),
    ("LAN host v4", "192.168.77.50", WAN4, OPEN_PORT, False),
    ("hub tunnel v6", HUB6, WAN6, OPEN_PORT, False),
    ("LAN host v6", "2001:db8:1::50", WAN6, OPEN_PORT, False),
    ("delegated LAN v6", "2001:db8:120::50", WAN6, OPEN_PORT, False),
    ("internet v4", NET4, WAN4, OPEN_PORT, True),
    ("internet v6", NET6, WAN6, OPEN_PORT, True),
    ("hub tunnel v4 to WireGuard's port", HUB4, WAN4, WG_PORT, True),
)


def edge_model(route: str):
    from keel.model import Firewall, Lan, Peer, RouterModel, Wan, WireGuard

    hub = Peer("k" * 43 + "=", (f"{HUB4}/32", f"{HUB6}/128"), f"{NET4}:{WG_PORT}", 25)
    return RouterModel(
        wans=(Wan("eth0", mode="static", address=f"{WAN4}/24", gateway=NET4),),
        lans=(Lan("eth1", f"{LAN4}/24", address6=f"{LAN6}/64"),),
        wireguard=WireGuard(address=(f"{TUN4}/24", f"{TUN6}/64"), route=route, peer=(hub,)),
        firewall=Firewall(open_udp=(OPEN_PORT,)))


def _mapped(addr: str) -> str:
    """An IPv4 address as a dual-stack socket writes it."""
    return addr if ":" in addr else f"::ffff:{addr}"


def _topology(edge: Here, lan: Host, net: Host, hub: Host) -> None:
    for h in (edge, lan, net, hub):
        for conf in ("all", "default"):
            h.sh("sysctl", "-qw", f"net.ipv6.conf.{conf}.accept_dad=0")
        h.sh("ip", "link", "set", "lo", "up")
    for conf in ("all", "default"):  # keel sets no rp_filter: the kernel's default
        edge.sh("sysctl", "-qw", f"net.ipv4.conf.{conf}.rp_filter=0")
    edge.sh("sysctl", "-qw", "net.ipv4.ip_forward=1")
    edge.sh("sysctl", "-qw", "net.ipv6.conf.all.forwarding=1")
    for dev, peer, host in (("eth0", "n0", net), ("eth1", "l0", lan), ("wg0", "h0", hub)):
        edge.sh("ip", "link", "add", dev, "type", "veth", "peer", "name", peer, "netns",
                host.pid)
        edge.sh("sysctl", "-qw", f"net.ipv4.conf.{dev}.rp_filter=0")
        edge.sh("ip", "link", "set", dev, "up")
        host.sh("ip", "link", "set", peer, "up")
    for addr, dev in ((f"{WAN4}/24", "eth0"), (f"{WAN6}/64", "eth0"), (f"{LAN4}/24", "eth1"),
                      (f"{LAN6}/64", "eth1"), (f"{TUN4}/24", "wg0"), (f"{TUN6}/64", "wg0")):
        edge.sh("ip", "addr", "add", addr, "dev", dev)
    edge.sh("ip", "-6", "addr", "add", DELEGATED, "dev", "eth1", "valid_lft", "3600",
            "preferred_lft", "1800")
    edge.sh("ip", "route", "add", "default", "via", NET4)
    edge.sh("ip", "-6", "route", "add", "default", "via", NET6)
    # the WAN's segment: the internet router, and the spoofer's addresses on lo
    net.sh("ip", "addr", "add", f"{NET4}/24", "dev", "n0")
    net.sh("ip", "addr", "add", f"{NET6}/64", "dev", "n0")
    for _, src, dst, _, _ in SENDS:
        if src not in (NET4, NET6):
            net.sh("ip", "addr", "replace", src, "dev", "lo")
        if dst == TUN4:
            net.sh("ip", "route", "replace", f"{TUN4}/32", "via", WAN4)
    hub.sh("ip", "addr", "add", f"{HUB4}/24", "dev", "h0")
    hub.sh("ip", "addr", "add", f"{HUB6}/64", "dev", "h0")


def _policy(edge: Here, model) -> None:
    """keel's routes and rules through the tunnel (route = "all": wg-quick's
    fwmark scheme), as keel.apply.engine puts them."""
    from keel.render import wireguard

    assert model.wireguard is not None
    for argv in wireguard.route_commands(model.wireguard):
        edge.sh(*argv)
    for rule in wireguard.policy_rules(model.wireguard):
        edge.sh("ip", "rule", "add", "priority", *rule)


def _round(edge: Here, net: Host) -> dict[str, bool]:
    """Each of SENDS once: whether it reached the edge's listener."""
    listeners = {port: edge.start("udp-listen", str(port)) for port in (OPEN_PORT, WG_PORT)}
    for name, src, dst, port, _ in SENDS:
        net.act("udp-send", _mapped(src), "40000", _mapped(dst), str(port), "n0", name)
    got = {text for port in listeners for _, text in finish(listeners[port])["got"]}
    return {name: name in got for name, *_ in SENDS}


def scenario(route: str, scratch: str) -> dict[str, Any]:
    """Run in the edge's namespace: what arrived without keel's ruleset and
    with it."""
    from keel.render import nft
    from keel.system.commands import Runner

    model = edge_model(route)
    edge = Here()
    hosts: list[Host] = []
    try:
        for _ in range(3):
            hosts.append(Host())
        lan, net, hub = hosts
        _topology(edge, lan, net, hub)
        _policy(edge, model)
        before = _round(edge, net)
        path = Path(scratch) / "ruleset.nft"
        path.write_text(nft.render_ruleset(model))
        Runner().run(["nft", "-f", str(path)])
        after = _round(edge, net)
    finally:
        for host in hosts:
            host.stop()
    return {"before": before, "after": after}


# --- the adaptive daemon's receive path -----------------------------------------------
REFLECTOR = """
import socket, sys, threading, time
sys.path.insert(0, sys.argv[1])
from keel.adaptive.reflector import Reflector
r = Reflector(lambda: 0.0, find=lambda: {"h0": socket.if_nametoindex("h0")})
stop = threading.Event()
threading.Thread(target=r.run, args=(stop,), daemon=True).start()
print("ready", flush=True)
sys.stdin.readline()
stop.set()
"""

FORGE = """
import socket, sys
sys.path.insert(0, sys.argv[1])
from keel.adaptive import wire
src, dst = sys.argv[2], sys.argv[3]
port, seq, sent = (int(v) for v in sys.argv[4:7])
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind((src, wire.PORT))
p = wire.Probe(seq, sent)
for _ in range(5):
    s.sendto(wire.answer(p, sent + 1_000_000, sent + 1_100_000, 0), (dst, port))
"""


def _python(host: Host, script: str, *args: str) -> list[str]:
    tui = str(Path(__file__).resolve().parents[3] / "tui")
    return ["nsenter", "-t", host.pid, "-n", sys.executable, "-c", script, tui, *args]


def daemon_scenario(scratch: str) -> dict[str, Any]:
    """Run in the edge's namespace, without a ruleset: answers taken by the
    daemon from the real reflector, from a forger on the WAN (the right
    number and time: the strongest forger), and from a forger in the tunnel
    (a number it guessed)."""
    from keel.adaptive import daemon as d
    from keel.adaptive.controller import Bounds

    edge = Here()
    hosts: list[Host] = []
    out: dict[str, Any] = {}
    try:
        for _ in range(3):
            hosts.append(Host())
        lan, net, hub = hosts
        _topology(edge, lan, net, hub)
        reflector = subprocess.Popen(_python(hub, REFLECTOR), stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True)
        assert reflector.stdout is not None and reflector.stdout.readline().strip() == "ready"
        plan = d.Plan(HUB4, "eth0", "eth0", Bounds(500, 1000, 2000), None, "wg0", TUN4)
        daemon = d.Daemon(plan, run_dir=Path(scratch), cake=_NoCake())
        port = str(daemon.sock.getsockname()[1])

        def drained() -> int:
            time.sleep(0.3)
            before = daemon.answers
            daemon._drain(time.monotonic())
            return daemon.answers - before

        time.sleep(0.5)  # the reflector's first scan binds its socket
        daemon._send()
        out["reflector"] = drained()
        # a probe the daemon waits for (not sent: the reflector would answer it)
        sent = time.time_ns()
        seq = daemon.outstanding.new(sent)
        subprocess.run(_python(net, FORGE, HUB4, TUN4, port, str(seq), str(sent)), check=True)
        out["forged_on_wan"] = drained()
        forged = daemon.forged
        reflector.communicate("\n", timeout=10)  # its port is the forger's now
        subprocess.run(_python(hub, FORGE, HUB4, TUN4, port, str(seq ^ 1), str(sent)),
                       check=True)
        subprocess.run(_python(hub, FORGE, HUB4, TUN4, port, str(seq), str(sent + 1)),
                       check=True)
        out["guessed_in_tunnel"] = drained()
        out["refused_in_tunnel"] = daemon.forged - forged
        out["bound"] = [daemon.sock.getsockname()[0]]
        daemon.sock.close()
    finally:
        for host in hosts:
            host.stop()
    return out


class _NoCake:
    def set(self, dev: str, kbit: int) -> None:  # the host has no sch_cake
        pass

