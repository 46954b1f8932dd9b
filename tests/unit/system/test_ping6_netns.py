"""The probes to an IPv6 peer on a real kernel with the real ping, no VM:
three network namespaces, a (the router) joined to b by a veth `w0` (its
WAN: b is the way to the peer's endpoint, 198.51.100.7 and 2001:db8:ff::7,
off-link) and to c by a veth `t0` (standing for the tunnel: c answers for
nothing), b joined to c's far side by a link of MTU 1400.

Proves: keel.system.ping's PingProcess reads `ping -6`'s replies and losses
(keel.parse.ping), df_probe finds an IPv6 path MTU (its IPv6 + ICMPv6
headers) as it finds an IPv4 one; with keel's "route all through the
tunnel" rules (keel.render.wireguard.policy_rules), a probe without the
tunnel's fwmark goes into the tunnel and one with it (-m, as the outside
probe sends it) leaves by the WAN and is answered; keel.system.ipv6 says
the WAN has IPv6 from the kernel's own listing, and not once the default
route is gone.

Needs root, ip netns and ping (iputils: board/keel/dev-image/host-deps.sh):
without them it fails, saying what is missing."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from keel.model import WireGuard
from keel.render.wireguard import FWMARK, policy_rules

TUI = Path(__file__).resolve().parents[3] / "tui"
PEER4, PEER6 = "198.51.100.7", "2001:db8:ff::7"  # the endpoint, on b's loopback
FAR4, FAR6 = "10.6.0.2", "2001:db8:6::2"  # behind b, over the 1400-byte link


def sh(*argv: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=90, check=False)
    if check and proc.returncode != 0:
        raise AssertionError(f"{' '.join(argv)} exited {proc.returncode}: {proc.stderr}")
    return proc


def require_host() -> None:
    missing = [t for t in ("ip", "ping") if shutil.which(t) is None]
    if os.geteuid() != 0:
        missing.insert(0, "root")
    if missing:
        pytest.fail(f"this host lacks {', '.join(missing)}: run "
                    "board/keel/dev-image/host-deps.sh as root")


@pytest.fixture(scope="module")
def router() -> Iterator[str]:
    """Namespace a's name (b and c around it, as the module's doc says)."""
    require_host()
    tag = os.getpid()
    a, b, c = (f"keel-p6{n}-{tag}" for n in "abc")
    for ns in (a, b, c):
        sh("ip", "netns", "add", ns)
    try:
        sh("ip", "link", "add", "w0", "netns", a, "type", "veth", "peer", "name", "wb",
           "netns", b)
        sh("ip", "link", "add", "t0", "netns", a, "type", "veth", "peer", "name", "tc",
           "netns", c)
        sh("ip", "link", "add", "far", "netns", b, "mtu", "1400", "type", "veth", "peer",
           "name", "fc", "netns", c)
        for ns, dev, addrs in ((a, "w0", ("192.0.2.1/24", "2001:db8:1::1/64")),
                               (b, "wb", ("192.0.2.2/24", "2001:db8:1::2/64")),
                               (b, "far", ("10.6.0.1/24", "2001:db8:6::1/64")),
                               (c, "fc", (f"{FAR4}/24", f"{FAR6}/64")),
                               (a, "t0", ()), (c, "tc", ())):
            sh("ip", "-n", ns, "link", "set", "lo", "up")
            for addr in addrs:
                sh("ip", "-n", ns, "addr", "add", addr, "dev", dev, *(
                    ["nodad"] if ":" in addr else []))
            sh("ip", "-n", ns, "link", "set", dev, "up")
        sh("ip", "-n", b, "addr", "add", f"{PEER4}/32", "dev", "lo")
        sh("ip", "-n", b, "addr", "add", f"{PEER6}/128", "dev", "lo")
        for key in ("net.ipv4.ip_forward=1", "net.ipv6.conf.all.forwarding=1"):
            sh("ip", "netns", "exec", b, "sysctl", "-qw", key)
        sh("ip", "-n", a, "route", "add", "default", "via", "192.0.2.2")
        sh("ip", "-n", a, "-6", "route", "add", "default", "via", "2001:db8:1::2")
        sh("ip", "-n", c, "route", "add", "default", "via", "10.6.0.1")
        sh("ip", "-n", c, "-6", "route", "add", "default", "via", "2001:db8:6::1")
        for target in (PEER6, FAR6):  # neighbours known before the tests time anything
            sh("ip", "netns", "exec", a, "ping", "-6", "-n", "-c", "1", "-w", "5", target)
        yield a
    finally:
        for ns in (a, b, c):
            sh("ip", "netns", "del", ns, check=False)


def in_router(ns: str, script: str) -> dict:
    proc = sh("ip", "netns", "exec", ns, sys.executable, "-c",
              f"import sys; sys.path.insert(0, {str(TUI)!r})\n{script}")
    return json.loads(proc.stdout)


def test_a_ping_process_reads_ping_6(router):
    got = in_router(router, f"""
import json, time
from keel.system.ping import PingProcess
out = {{}}
for name, target in (("peer", {PEER6!r}), ("silent", "2001:db8:dead::1")):
    p = PingProcess(target, 0.2, loss_after=1.0)
    p.start()
    time.sleep(2.0)
    p.settle(time.time() - 0.5)
    p.stop()
    out[name] = {{"argv": p.argv, "rtts": [s.rtt_ms for s in p.drain(time.time() + 5)]}}
print(json.dumps(out))
""")
    peer, silent = got["peer"], got["silent"]
    assert peer["argv"][:2] == ["ping", "-6"] and peer["argv"][-1] == PEER6
    assert len(peer["rtts"]) >= 5 and all(r is not None and r < 100 for r in peer["rtts"])
    # b has no route for it (forwarding, no default): unreachable, every probe lost
    assert len(silent["rtts"]) >= 5 and all(r is None for r in silent["rtts"])


def test_the_path_mtu_of_both_families(router):
    got = in_router(router, f"""
import json
from keel.selftest.mtu import path_mtu
from keel.system.ping import df_probe
print(json.dumps({{a: path_mtu(lambda m: df_probe(a, m, tries=1), 1500, low=1280)
                  for a in ({FAR4!r}, {FAR6!r})}}))
""")
    assert got == {FAR4: 1400, FAR6: 1400}


def test_the_outside_probe_leaves_by_the_wan_with_the_tunnels_fwmark(router):
    """keel's rules for route = all (IPv4, as keel apply adds them; IPv6 the
    same, as wg-quick adds them): what is not marked goes into the tunnel
    (t0, where nothing answers); the marked probe takes the main table."""
    for prio, *selector in policy_rules_all():
        for family in ("-4", "-6"):
            sh("ip", "-n", router, family, "rule", "add", "priority", prio,
               *[s for s in selector if s not in ("from", "all")])
    for family in ("-4", "-6"):
        sh("ip", "-n", router, family, "route", "add", "default", "dev", "t0", "table",
           str(FWMARK))
    try:
        got = in_router(router, f"""
import json, subprocess
from keel.parse.ping import track
from keel.system.ping import ping_argv
out = {{}}
for target in ({PEER4!r}, {PEER6!r}):
    for mark in (None, {FWMARK}):
        argv = ping_argv(target, 0.2, mark)
        argv[-1:] = ["-c", "3", "-w", "2", target]
        text = subprocess.run(argv, capture_output=True, text=True).stdout
        out[f"{{target}} {{mark}}"] = [s.rtt_ms for s in track(text, 0.2, 2.0)]
print(json.dumps(out))
""")
    finally:
        for family in ("-4", "-6"):
            for prio in ("31999", "32000"):
                sh("ip", "-n", router, family, "rule", "del", "priority", prio, check=False)
            sh("ip", "-n", router, family, "route", "flush", "table", str(FWMARK),
               check=False)
    for target in (PEER4, PEER6):
        assert got[f"{target} {FWMARK}"] and all(r is not None for r in
                                                 got[f"{target} {FWMARK}"]), got
        assert all(r is None for r in got[f"{target} None"]), got


def policy_rules_all() -> list[tuple[str, ...]]:
    return policy_rules(WireGuard(address=("10.77.0.2/24",), route="all"))


def test_the_wan_has_ipv6_as_the_kernel_lists_it(router):
    script = """
import json
from keel.system.ipv6 import read_wan_ipv6
from keel.system.source import RealSource
print(json.dumps(read_wan_ipv6(RealSource(), {"t0"})))
"""
    assert in_router(router, script) is True
    sh("ip", "-n", router, "-6", "route", "del", "default")
    try:
        assert in_router(router, script) is False
    finally:
        sh("ip", "-n", router, "-6", "route", "add", "default", "via", "2001:db8:1::2")
