"""Real packets through keel's ruleset, on the host, in network namespaces
made for it (nothing of the host's is touched):

    inside host --- router (keel's ruleset) --- internet router --- (a 1280 MTU link)

The router is the namespace tests.unit.netns.run_in_netns made; the inside
host (a LAN host, or on the hub an edge behind its tunnel: a veth named like
the tunnel) and the internet router are two more, each held by a `sleep` that
`unshare -n` started, entered with `nsenter`. Both families are addressed;
the internet router routes the inside /64 to the router, and has a link of
MTU 1280 (both ends of a veth pair, its own) for packet-too-big.

`scenario(kind)` builds it, loads the ruleset keel renders for EDGE6 or HUB6,
sends the packets and says what arrived, as one JSON-able dict. The actions
run in the other namespaces are this module's command line
(`python -m tests.unit.render.nft_traffic ACTION ...`, one JSON line out)."""

from __future__ import annotations

import contextlib
import json
import os
import select
import socket
import struct
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

TOP = Path(__file__).resolve().parents[3]

WAN6, WAN6_ROUTER, WAN6_NET = "2001:db8:ff::1", "2001:db8:ff::2", "2001:db8:ff::/64"
WAN4, WAN4_NET = "203.0.113.1", "203.0.113.2"  # the router's, the internet router's
SMALL_NET, SMALL_HOST = "2001:db8:f::/64", "2001:db8:f::2"  # behind the 1280 link
SMALL_MTU = 1280
# each scenario: the inside device's name, its /64 (router ::1, host ::2), IPv4
INSIDE = {
    "edge": ("eth1", "2001:db8:1::", "192.168.77.1", "192.168.77.2", 24),
    "hub": ("wg0", "2001:db8:100:1::", "10.77.0.1", "10.77.0.2", 24),
}
FORWARD_PORT = 8443  # an IPv6 [[forward]] to the inside host
CLOSED_PORT = 2222  # listened on by the inside host, forwarded by nothing
SERVICE_PORT = 5353  # listened on by the router (TCP)
# the targets of two neighbour solicitations sent to the router: hop limit 64, 255
NS_FORWARDED, NS_LINK = "2001:db8:ff::98", "2001:db8:ff::99"
WAIT_S = 1.0  # how long an answer that should come is given
SETTLE_S = 0.2  # what was sent has arrived (veths: at once) before a listener stops
LONGEST_S = 30  # a listener stops by itself at the latest


# --- actions, run in a namespace ---------------------------------------------------
def _icmp_socket(hops: int | None = None) -> socket.socket:
    s = socket.socket(socket.AF_INET6, socket.SOCK_RAW, socket.IPPROTO_ICMPV6)
    if hops is not None:
        s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_UNICAST_HOPS, hops)
    return s


def _until_stdin_closes(socks: list[socket.socket], each: Any) -> None:
    """Calls each(sock) for every socket ready to read, until this process's
    stdin closes (the caller is done: what was sent has arrived by then) or
    LONGEST_S have passed."""
    end = time.monotonic() + LONGEST_S
    while (left := end - time.monotonic()) > 0:
        ready = select.select([*socks, sys.stdin], [], [], left)[0]
        if sys.stdin in ready and not sys.stdin.readline():
            return
        for s in ready:
            if s is not sys.stdin:
                each(s)


def _message(data: bytes, addr: Any) -> list[Any]:
    """An ICMPv6 message as a raw socket gets it: [type, code, source, body hex]."""
    return [data[0], data[1], addr[0].split("%")[0], data[4:40].hex()]


def act_echo(dst: str, size: str = "8") -> dict[str, Any]:
    """An echo request of `size` bytes of payload; what came back (until
    the reply or an error, WAIT_S at most)."""
    got: list[list[Any]] = []
    with _icmp_socket() as s:
        s.sendto(struct.pack("!BBHHH", 128, 0, 0, 0x6b65, 1) + b"k" * int(size), (dst, 0))
        end = time.monotonic() + WAIT_S
        while (left := end - time.monotonic()) > 0 and select.select([s], [], [], left)[0]:
            got.append(_message(*s.recvfrom(65535)))
            if (got[-1][0] == 129 and got[-1][2] == dst) or got[-1][0] < 128:
                break
    return {"reply": any(m[0] == 129 and m[2] == dst for m in got), "got": got}


def act_send(dst: str, type_: str, code: str, body_hex: str, hops: str = "64") -> dict[str, Any]:
    """One ICMPv6 message as given (the kernel fills the checksum in)."""
    with _icmp_socket(int(hops)) as s:
        s.sendto(struct.pack("!BBH", int(type_), int(code), 0) + bytes.fromhex(body_hex),
                 (dst, 0))
    return {}


def act_watch() -> dict[str, Any]:
    """Prints "ready", then (stdin closed) the ICMPv6 messages that arrived."""
    got: list[list[Any]] = []
    with _icmp_socket() as s:
        print("ready", flush=True)
        _until_stdin_closes([s], lambda s: got.append(_message(*s.recvfrom(65535))))
    return {"got": got}


def act_serve(port: str) -> dict[str, Any]:
    """A TCP listener (both families), "ready", then (stdin closed) the
    peers that connected."""
    peers: list[str] = []

    def accept(srv: socket.socket) -> None:
        conn, addr = srv.accept()
        peers.append(addr[0].removeprefix("::ffff:"))
        conn.close()

    with socket.create_server(("::", int(port)), family=socket.AF_INET6,
                              dualstack_ipv6=True) as srv:
        print("ready", flush=True)
        _until_stdin_closes([srv], accept)
    return {"peers": peers}


def act_connect(host: str, port: str) -> dict[str, Any]:
    try:
        with socket.create_connection((host, int(port)), timeout=WAIT_S):
            return {"ok": True}
    except OSError as e:
        return {"ok": False, "error": type(e).__name__}


def act_udp_listen(port: str) -> dict[str, Any]:
    """A UDP socket, "ready", then (stdin closed) what it got: [source, text]."""
    got: list[list[str]] = []

    def recv(s: socket.socket) -> None:
        data, addr = s.recvfrom(2048)
        got.append([addr[0].split("%")[0], data.decode()])

    with socket.socket(socket.AF_INET6, socket.SOCK_DGRAM) as s:
        s.bind(("::", int(port)))
        print("ready", flush=True)
        _until_stdin_closes([s], recv)
    return {"got": got}


def act_udp_send(src: str, sport: str, dst: str, dport: str, dev: str, data: str
                 ) -> dict[str, Any]:
    """A datagram from src:sport to dst:dport (link-local ones on dev)."""
    scope = socket.if_nametoindex(dev) if dst.startswith("fe80:") else 0
    with socket.socket(socket.AF_INET6, socket.SOCK_DGRAM) as s:
        s.bind((src, int(sport), 0, socket.if_nametoindex(dev) if src.startswith("fe80:")
                else 0))
        s.sendto(data.encode(), (dst, int(dport), 0, scope))
    return {}


ACTIONS = {"echo": act_echo, "send": act_send, "watch": act_watch, "serve": act_serve,
           "connect": act_connect, "udp-listen": act_udp_listen, "udp-send": act_udp_send}


# --- the topology, from the router's namespace ---------------------------------------
def _sh(*argv: str) -> str:
    return subprocess.run(argv, capture_output=True, text=True, check=True).stdout


class Here:
    """This namespace (the router's): its actions run as they do elsewhere."""

    def _argv(self, action: str, *args: str) -> list[str]:
        return [sys.executable, "-m", "tests.unit.render.nft_traffic", action, *args]

    def sh(self, *argv: str) -> str:
        return _sh(*argv)

    def act(self, action: str, *args: str) -> dict[str, Any]:
        out = subprocess.run(self._argv(action, *args), capture_output=True, text=True,
                             check=True, cwd=TOP)
        return json.loads(out.stdout)

    def start(self, action: str, *args: str) -> subprocess.Popen[str]:
        """An action that prints "ready" first: returned once it has."""
        proc = subprocess.Popen(self._argv(action, *args), stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, text=True, cwd=TOP)
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        return proc


class Host(Here):
    """A namespace held by a sleeping process of its own."""

    def __init__(self) -> None:
        self.proc = subprocess.Popen(["unshare", "-n", "sleep", "120"])
        mine = os.readlink("/proc/self/ns/net")
        for _ in range(200):
            with contextlib.suppress(OSError):
                if os.readlink(f"/proc/{self.proc.pid}/ns/net") != mine:
                    break
            time.sleep(0.01)
        else:
            raise RuntimeError("the namespace did not come up")
        self.pid = str(self.proc.pid)

    def sh(self, *argv: str) -> str:
        return _sh("nsenter", "-t", self.pid, "-n", *argv)

    def _argv(self, action: str, *args: str) -> list[str]:
        return ["nsenter", "-t", self.pid, "-n", *super()._argv(action, *args)]

    def stop(self) -> None:
        self.proc.kill()
        self.proc.wait()


def finish(proc: subprocess.Popen[str]) -> dict[str, Any]:
    """A started action's result, once what was sent has had time to arrive."""
    time.sleep(SETTLE_S)
    out, _ = proc.communicate(timeout=LONGEST_S)
    return json.loads(out)


def _link_local(host: Here, dev: str) -> str:
    out = host.sh("ip", "-j", "-6", "addr", "show", "dev", dev, "scope", "link")
    return next(a["local"] for i in json.loads(out) for a in i["addr_info"] if "local" in a)


def _ptb(src: str, dst: str) -> str:
    """A packet-too-big's body (MTU, then the start of the packet it says was
    too big: one from src to dst that conntrack never saw)."""
    inner = (struct.pack("!IHBB", 6 << 28, 1400, 17, 64) + socket.inet_pton(socket.AF_INET6, src)
             + socket.inet_pton(socket.AF_INET6, dst) + struct.pack("!HHHH", 40000, 53, 1400, 0))
    return struct.pack("!I", SMALL_MTU).hex() + inner.hex()


def _ns(target: str) -> str:
    """A neighbour solicitation's body for target (no options)."""
    return (b"\0" * 4 + socket.inet_pton(socket.AF_INET6, target)).hex()


def _setup(kind: str, router: Here, inside: Host, net: Host) -> None:
    dev, prefix, in4, host4, len4 = INSIDE[kind]
    for h in (router, inside, net):
        for conf in ("all", "default"):  # addresses usable at once, link-local ones too
            h.sh("sysctl", "-qw", f"net.ipv6.conf.{conf}.accept_dad=0")
        h.sh("ip", "link", "set", "lo", "up")
    router.sh("ip", "link", "add", dev, "type", "veth", "peer", "name", "h0", "netns",
              inside.pid)
    router.sh("ip", "link", "add", "eth0", "type", "veth", "peer", "name", "n0", "netns",
              net.pid)
    for h in (router, net):
        h.sh("sysctl", "-qw", "net.ipv6.conf.all.forwarding=1")
    router.sh("sysctl", "-qw", "net.ipv4.ip_forward=1")
    # the router
    for addr, d in ((f"{prefix}1/64", dev), (f"{in4}/{len4}", dev), (f"{WAN6}/64", "eth0"),
                    (f"{WAN4}/24", "eth0")):
        router.sh("ip", "addr", "add", addr, "dev", d)
    for d in (dev, "eth0"):
        router.sh("ip", "link", "set", d, "up")
    router.sh("ip", "-6", "route", "add", "default", "via", WAN6_ROUTER)
    router.sh("ip", "route", "add", "default", "via", WAN4_NET)
    # the inside host
    inside.sh("ip", "link", "set", "h0", "up")
    inside.sh("ip", "addr", "add", f"{prefix}2/64", "dev", "h0")
    inside.sh("ip", "addr", "add", f"{host4}/{len4}", "dev", "h0")
    inside.sh("ip", "-6", "route", "add", "default", "via", f"{prefix}1")
    inside.sh("ip", "route", "add", "default", "via", in4)
    # the internet: routes the inside /64 to the router; a 1280 link beyond
    net.sh("ip", "link", "add", "n1", "mtu", str(SMALL_MTU), "type", "veth", "peer",
           "name", "n2", "mtu", str(SMALL_MTU))
    for d in ("n0", "n1", "n2"):
        net.sh("ip", "link", "set", d, "up")
    net.sh("ip", "addr", "add", f"{WAN6_ROUTER}/64", "dev", "n0")
    net.sh("ip", "addr", "add", f"{WAN4_NET}/24", "dev", "n0")
    net.sh("ip", "-6", "route", "add", f"{prefix}/64", "via", WAN6)
    net.sh("ip", "-6", "route", "add", SMALL_NET, "dev", "n1")


def scenario(kind: str, scratch: str) -> dict[str, Any]:
    """Run in the router's namespace. `kind`: "edge" (a LAN, the WAN's
    IPv6 "auto") or "hub" (the routed prefix through the tunnel)."""
    from keel.apply import engine
    from keel.render import nft
    from keel.system.commands import Runner
    from tests.unit.render.test_nft_ipv6 import EDGE6, HUB6

    model = {"edge": EDGE6, "hub": HUB6}[kind]
    prefix = INSIDE[kind][1]
    in6, host6 = prefix + "1", prefix + "2"
    router = Here()
    out: dict[str, Any] = {}
    hosts: list[Host] = []
    try:
        for _ in range(2):  # each stopped below, even if the next fails to start
            hosts.append(Host())
        inside, net = hosts
        _setup(kind, router, inside, net)
        # keel's ruleset, as keel apply loads and records it
        runner, run_dir = Runner(), Path(scratch)
        path = run_dir / "ruleset.nft"
        path.write_text(nft.render_ruleset(model))
        runner.run(["nft", "-f", str(path)])
        engine.record_live_ruleset(runner, run_dir)
        listing = engine.Probe(runner, run_dir).nft_listing()

        # out: echo (neighbours resolve on both links), a connection in each
        # family, to a listener on the internet that says who it saw
        out["echo_router"] = inside.act("echo", in6)["reply"]
        out["echo_out"] = inside.act("echo", WAN6_ROUTER)["reply"]
        serve = net.start("serve", "9000")
        out["out6"] = inside.act("connect", WAN6_ROUTER, "9000")["ok"]
        out["out4"] = inside.act("connect", WAN4_NET, "9000")["ok"]
        out["out_peers"] = finish(serve)["peers"]
        # a packet too big for the 1280 link: the internet router says so
        big = inside.act("echo", SMALL_HOST, "1400")["got"]
        out["ptb_related"] = [m[:3] for m in big if m[0] == 2]
        out["ptb_mtu"] = [int(m[3][:8], 16) for m in big if m[0] == 2]

        # in: echo to the inside host, a new connection to it (closed, and
        # the forwarded port), errors and other ICMPv6 conntrack knows nothing of
        out["echo_in"] = net.act("echo", host6)["reply"]
        serve = inside.start("serve", str(CLOSED_PORT))
        out["in_closed"] = net.act("connect", host6, str(CLOSED_PORT))
        out["in_closed_peers"] = finish(serve)["peers"]
        serve = inside.start("serve", str(FORWARD_PORT))
        out["in_forward"] = net.act("connect", host6, str(FORWARD_PORT))["ok"]
        out["in_forward_peers"] = finish(serve)["peers"]
        watch = inside.start("watch")
        net.act("send", host6, "2", "0", _ptb(host6, "2001:db8:99::53"))
        net.act("send", host6, "139", "0", "0000" + "00" * 12)  # node information query
        net.act("send", host6, "138", "0", "00" * 12)  # router renumbering
        # (what the internet router sent: not the router's own neighbour discovery)
        out["in_icmp"] = [m[:3] for m in finish(watch)["got"] if m[2] == WAN6_ROUTER]

        # to the router from the internet: what its input chain lets in
        # (the router's own raw ICMPv6 socket: what its input chain let in)
        watch = router.start("watch")
        net.act("echo", WAN6)
        net.act("send", WAN6, "135", "0", _ns(NS_FORWARDED), "64")  # as if forwarded
        net.act("send", WAN6, "135", "0", _ns(NS_LINK), "255")
        net.act("send", WAN6, "138", "0", "00" * 12)
        net.act("send", WAN6, "139", "0", "0000" + "00" * 12)
        net.act("send", WAN6, "137", "0", "00" * 36)  # a redirect
        got = finish(watch)["got"]
        out["router_icmp"] = sorted({m[0] for m in got if m[2] == WAN6_ROUTER})
        targets = {socket.inet_ntop(socket.AF_INET6, bytes.fromhex(m[3])[4:20])
                   for m in got if m[0] == 135 and m[2] == WAN6_ROUTER}
        out["router_ns_targets"] = sorted(targets & {NS_FORWARDED, NS_LINK})
        # DHCPv6 replies: from the link-local server to the link-local client
        ll_router, ll_net = _link_local(router, "eth0"), _link_local(net, "n0")
        listen = router.start("udp-listen", "546")
        net.act("udp-send", ll_net, "547", ll_router, "546", "n0", "link-local")
        net.act("udp-send", WAN6_ROUTER, "547", WAN6, "546", "n0", "global")
        out["dhcpv6"] = [d for _, d in finish(listen)["got"]]
        # a service of the router's: from inside (the LAN's input), not from outside
        serve = router.start("serve", str(SERVICE_PORT))
        out["service_inside"] = inside.act("connect", in6, str(SERVICE_PORT))["ok"]
        out["service_outside"] = net.act("connect", WAN6, str(SERVICE_PORT))["ok"]
        finish(serve)

        counters = json.loads(runner.run(list(nft.LIST_COUNTERS)).stdout)["nftables"]
        out["counters"] = {c["counter"]["name"]: c["counter"]["packets"]
                           for c in counters if "counter" in c}
        out["stable"] = listing == engine.Probe(runner, run_dir).nft_listing()
    finally:
        for host in hosts:
            host.stop()
    return out


if __name__ == "__main__":
    print(json.dumps(ACTIONS[sys.argv[1]](*sys.argv[2:])))
