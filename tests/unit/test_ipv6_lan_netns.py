"""The LAN's IPv6 as keel sets it, with a real dnsmasq and a real client
kernel, no VM: two network namespaces joined by a veth, the router's LAN in
one (its static address6 as keel.apply.engine puts it, and a /64 with
lifetimes standing for the one dhcpcd puts there from the WAN's
delegation), a host in the other taking SLAAC as any host does.

Proves, with keel.render.dnsmasq's config: the host gets an address in
both /64s and the router's own address as DNS server (RDNSS in the router
advertisement); when the delegated /64 changes, the host gets an address
in the new one and the old one is deprecated (dnsmasq follows the
interface's addresses); the static /64 stays.

Needs root, ip netns and dnsmasq (board/keel/dev-image/host-deps.sh):
without them it fails, saying what is missing."""

from __future__ import annotations

import ipaddress
import json
import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from keel.model import Lan, RouterModel, Wan
from keel.render import dnsmasq, ipv6

LAN, HOST = "lan0", "host0"
STATIC = "2001:db8:100:1::1/64"
DELEGATED, RENUMBERED = "2001:db8:110:0::1/64", "2001:db8:120:0::1/64"
MODEL = RouterModel(wans=(Wan("wan0", ipv6="auto"),),
                    lans=(Lan(LAN, "192.168.77.1/24", "192.168.77.100", "192.168.77.199",
                              address6=STATIC, ipv6_from_wan=True),))

# run in the host's namespace: one router advertisement's prefixes and RDNSS
RA_LISTENER = r"""
import json, socket, struct, sys
s = socket.socket(socket.AF_INET6, socket.SOCK_RAW, socket.IPPROTO_ICMPV6)
s.settimeout(float(sys.argv[2]))
index = socket.if_nametoindex(sys.argv[1])
s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_MULTICAST_HOPS, 255)
try:  # a solicitation; before its link-local address is ready, the next RA comes anyway
    s.sendto(bytes([133, 0, 0, 0, 0, 0, 0, 0]), ("ff02::2", 0, 0, index))
except OSError:
    pass
while True:
    data, src = s.recvfrom(4096)
    if len(data) < 16 or data[0] != 134:
        continue
    out = {"from": src[0], "prefixes": {}, "rdnss": []}
    p = 16
    while p + 2 <= len(data) and data[p + 1]:
        kind, size = data[p], data[p + 1] * 8
        opt = data[p:p + size]
        if kind == 3 and size == 32:
            prefix = socket.inet_ntop(socket.AF_INET6, opt[16:32]) + "/" + str(opt[2])
            out["prefixes"][prefix] = struct.unpack("!II", opt[4:12])
        elif kind == 25:
            out["rdnss"] += [socket.inet_ntop(socket.AF_INET6, opt[i:i + 16])
                             for i in range(8, size, 16)]
        p += size
    print(json.dumps(out))
    break
"""


def sh(*argv: str, check: bool = True) -> subprocess.CompletedProcess:
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False)
    if check and proc.returncode != 0:
        raise AssertionError(f"{' '.join(argv)} exited {proc.returncode}: {proc.stderr}")
    return proc


def require_host() -> None:
    missing = [t for t in ("ip", "dnsmasq") if shutil.which(t) is None]
    if os.geteuid() != 0:
        missing.insert(0, "root")
    if missing:
        pytest.fail(f"this host lacks {', '.join(missing)}: run "
                    "board/keel/dev-image/host-deps.sh as root")


@pytest.fixture
def netns(tmp_path: Path) -> Iterator[tuple[str, str]]:
    require_host()
    tag = f"{os.getpid()}"
    router, host = f"keel-ra-r{tag}", f"keel-ra-h{tag}"
    sh("ip", "netns", "add", router)
    sh("ip", "netns", "add", host)
    try:
        sh("ip", "link", "add", LAN, "netns", router, "type", "veth", "peer", "name", HOST,
           "netns", host)
        for ns, dev in ((router, LAN), (host, HOST)):
            sh("ip", "-n", ns, "link", "set", "lo", "up")
            sh("ip", "-n", ns, "link", "set", dev, "up")
        sh("ip", "netns", "exec", router, "sysctl", "-qw", "net.ipv6.conf.all.forwarding=1")
        yield router, host
    finally:
        for ns in (router, host):
            for pid in sh("ip", "netns", "pids", ns, check=False).stdout.split():
                sh("kill", pid, check=False)
            sh("ip", "netns", "del", ns, check=False)


def host_addresses(host: str) -> dict[str, int]:
    """The host's global addresses: {address/len: preferred lifetime}."""
    data = json.loads(sh("ip", "-n", host, "-j", "addr", "show", "dev", HOST).stdout)
    return {f"{a['local']}/{a['prefixlen']}": a.get("preferred_life_time", 0)
            for entry in data for a in entry.get("addr_info", [])
            if a.get("family") == "inet6" and a.get("scope") == "global"}


def wait_for(host: str, prefixes: list[str], timeout: float = 30) -> dict[str, int]:
    deadline = time.monotonic() + timeout
    while True:
        have = host_addresses(host)
        if all(any(ipaddress.ip_interface(a).network == ipaddress.ip_network(p)
                   for a in have) for p in prefixes):
            return have
        if time.monotonic() > deadline:
            raise AssertionError(f"the host has {sorted(have)}, not an address in each of "
                                 f"{prefixes}")
        time.sleep(0.3)


def in_net(addresses: dict[str, int], prefix: str) -> dict[str, int]:
    net = ipaddress.ip_network(prefix)
    return {a: p for a, p in addresses.items() if ipaddress.ip_interface(a).network == net}


def listen_ra(host: str) -> dict:
    proc = sh("ip", "netns", "exec", host, "python3", "-c", RA_LISTENER, HOST, "20")
    return json.loads(proc.stdout)


def test_dnsmasq_announces_the_static_and_the_delegated_64_and_follows_a_change(
        netns, tmp_path):
    router, host = netns
    for addr in ipv6.lan_addresses(MODEL)[LAN]:  # what keel puts on the LAN
        sh("ip", "-n", router, "addr", "replace", addr, "dev", LAN)
    # what dhcpcd puts there: a /64 of the delegation, with its lifetimes
    sh("ip", "-n", router, "addr", "add", DELEGATED, "dev", LAN, "valid_lft", "600",
       "preferred_lft", "300")
    conf = dnsmasq.render_dnsmasq(MODEL)
    assert conf is not None
    conf = (conf.replace(dnsmasq.LEASES, str(tmp_path / "leases"))
            .replace("/run/resolv.conf.wan", str(tmp_path / "resolv.conf.wan")))
    (tmp_path / "resolv.conf.wan").write_text("")
    (tmp_path / "dnsmasq.conf").write_text(conf)
    # port 0: no DNS here (the host's resolver stays as it is); RDNSS still
    # names the router when dns-server is given as [::]
    sh("ip", "netns", "exec", router, "dnsmasq", f"--conf-file={tmp_path / 'dnsmasq.conf'}",
       f"--pid-file={tmp_path / 'dnsmasq.pid'}", "--user=root", "--port=0")

    ra = listen_ra(host)
    assert set(ra["prefixes"]) == {"2001:db8:100:1::/64", "2001:db8:110::/64"}
    assert ra["rdnss"] and ipaddress.ip_address(ra["rdnss"][0]) in {
        ipaddress.ip_interface(STATIC).ip, ipaddress.ip_interface(DELEGATED).ip}
    valid, _preferred = ra["prefixes"]["2001:db8:100:1::/64"]
    assert valid == 3600  # dnsmasq.RA_LIFETIME, not forever
    have = wait_for(host, ["2001:db8:100:1::/64", "2001:db8:110::/64"])

    # the provider renumbers: dhcpcd takes the old /64 off the LAN, puts the new one on
    sh("ip", "-n", router, "addr", "del", DELEGATED, "dev", LAN)
    sh("ip", "-n", router, "addr", "add", RENUMBERED, "dev", LAN, "valid_lft", "600",
       "preferred_lft", "300")
    have = wait_for(host, ["2001:db8:100:1::/64", "2001:db8:120::/64"])
    deadline = time.monotonic() + 30
    while any(p > 0 for p in in_net(have, "2001:db8:110::/64").values()):
        assert time.monotonic() < deadline, f"the old /64 is still preferred: {have}"
        time.sleep(0.5)
        have = host_addresses(host)
    assert all(p > 0 for p in in_net(have, "2001:db8:100:1::/64").values())
