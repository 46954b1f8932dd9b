"""keel's dhcpcd config gets a delegated prefix from a real DHCPv6 server,
with no VM: two network namespaces joined by a veth, the lab's isp in one
(tests/lab/dhcpv6.py's commands: radvd with the M flag, Kea with its route
hook), an edge in the other (the kernel's SLAAC on the WAN as keel sets it,
keel.render.dhcpcd's config and argv, a LAN veth). Run twice: with this
host's own Debian packages of the servers (bookworm: Kea 2.2, radvd 2.19),
and with the lab tools disk (trixie: Kea 2.6.3, radvd 2.20, built by
tests/lab/labtools.py if it is not cached), mounted and chrooted into by the
very commands the lab's isp runs.

Proves: the WAN gets a SLAAC address; the LAN gets a /64 of the delegated
prefix, which the isp routes to the edge's link-local address; when the
provider renumbers, the LAN's /64 moves to the new pool within the
lifetimes and the old one goes, and so does the isp's route.

Needs root, unshare, nsenter, loop devices and the packages
board/keel/dev-image/host-deps.sh installs: without them it fails, saying
what is missing (it never skips). Everything it starts lives in namespaces
of its own: dhcpcd in a mount and UTS namespace with its own /run,
/var/lib/dhcpcd and /etc/resolv.conf, the servers in a mount namespace
with their own /run (and /var/lib), so the host's files stay as they
were."""

from __future__ import annotations

import ipaddress
import json
import os
import re
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from keel.model import Lan, RouterModel, Wan
from keel.render.dhcpcd import dhcpcd_argv, duid_uuid, render_dhcpcd
from keel.render.ipv6 import wan_sysctls
from tests.lab import dhcpv6, labtools

TOOLS = ("ip", "unshare", "nsenter", "setsid", "mount", "ping", "kea-dhcp6", "radvd", "dhcpcd")
WAN, LAN, ISP = "wan0", "lan0", "isp0"
MODEL = RouterModel(wans=(Wan(WAN, ipv6="auto", ipv6_pd_length=dhcpv6.DELEGATED_LENGTH),),
                    lans=(Lan(LAN, "192.168.77.1/24", ipv6_from_wan=True),))
# as keel apply leaves a router: forwarding on (keel.apply.engine's
# plan_forwarding, once its ruleset is in), and the WAN's sysctls for
# ipv6 = "auto": the kernel takes the RAs (SLAAC, default route)
CLIENT_SYSCTLS = ("net.ipv6.conf.all.forwarding=1",
                  *(f"{key}={value}" for key, value in wan_sysctls(MODEL)[WAN].items()))


def run(*argv: str, check: bool = True, **kwargs) -> subprocess.CompletedProcess:
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False,
                          **kwargs)
    if check and proc.returncode != 0:
        raise AssertionError(f"{' '.join(argv)} exited {proc.returncode}: {proc.stderr}")
    return proc


def require_host() -> None:
    missing = [tool for tool in TOOLS if shutil.which(tool) is None]
    if os.geteuid() != 0:
        missing.insert(0, "root")
    if missing:
        pytest.fail(f"this host lacks {', '.join(missing)}: run "
                    "board/keel/dev-image/host-deps.sh as root (this test never skips)")


class NsShell:
    """The isp's shell: commands run in a network namespace and a mount
    namespace of their own (a tmpfs /run, and /var/lib), held open by a
    sleeping process; what tests.lab.guest.Guest offers dhcpv6's helpers."""

    def __init__(self, netns: str, private: tuple[str, ...]) -> None:
        mounts = " && ".join(f"mount -t tmpfs -o mode=0755 keel-test {d}" for d in private)
        self.holder = subprocess.Popen(
            ["ip", "netns", "exec", netns, "unshare", "-m", "--propagation", "private",
             "sh", "-c", f"{mounts} && echo ready && exec sleep 600"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert self.holder.stdout and self.holder.stderr
        if self.holder.stdout.readline().strip() != "ready":
            self.holder.wait(10)
            raise AssertionError(f"no namespace for the isp: {self.holder.stderr.read()}")
        # ip netns exec and unshare exec in turn: the pid is the namespaces'
        self.enter = ["nsenter", "-t", str(self.holder.pid), "-m", "-n"]

    def run(self, cmd: str, timeout: float = 30) -> subprocess.CompletedProcess:
        return subprocess.run([*self.enter, "sh", "-c", cmd], capture_output=True,
                              text=True, timeout=timeout, check=False)

    def check(self, cmd: str, timeout: float = 30) -> str:
        proc = self.run(cmd, timeout)
        if proc.returncode != 0:
            raise AssertionError(f"`{cmd}` exited {proc.returncode}:\n{proc.stdout}"
                                 f"{proc.stderr}")
        return proc.stdout.strip()

    def until(self, cmd: str, timeout: float = 30, every: float = 0.5) -> str:
        end = time.monotonic() + timeout
        while True:
            proc = self.run(cmd, timeout)
            if proc.returncode == 0:
                return proc.stdout.strip()
            if time.monotonic() > end:
                raise AssertionError(f"`{cmd}` failed for {timeout} s:\n{proc.stdout}"
                                     f"{proc.stderr}")
            time.sleep(every)

    def write_file(self, path: str, content: str) -> None:
        subprocess.run([*self.enter, "sh", "-c", 'cat > "$1"', "sh", path], input=content,
                       text=True, check=True, timeout=30)

    def read(self, path: str) -> str:
        return self.run(f"cat {path} 2>&1").stdout

    def close(self) -> None:
        self.holder.kill()
        self.holder.wait(10)


def addresses(netns: str, dev: str) -> list[tuple[ipaddress.IPv6Interface, int]]:
    """(address/prefix, preferred seconds left) of `dev`'s global IPv6
    addresses, but those still in duplicate address detection."""
    out = run("ip", "-n", netns, "-j", "-6", "addr", "show", "dev", dev, "scope", "global")
    found = []
    for link in json.loads(out.stdout or "[]"):
        # (iproute2 lists the addresses its filter left out as {})
        for a in (a for a in link.get("addr_info", []) if "local" in a
                  and not a.get("tentative")):
            preferred = a.get("preferred_life_time", 0)
            found.append((ipaddress.IPv6Interface(f"{a['local']}/{a['prefixlen']}"),
                          preferred if isinstance(preferred, int) else 2 ** 32))
    return found


def link_local(netns: str, dev: str) -> str:
    out = run("ip", "-n", netns, "-j", "-6", "addr", "show", "dev", dev, "scope", "link")
    return next(a["local"] for a in json.loads(out.stdout)[0]["addr_info"] if "local" in a)


def wait_for(what: str, probe, timeout: float, context) -> object:
    """probe()'s first true answer within `timeout` seconds; else fails with
    `what` and context() (the servers' and the client's logs)."""
    end = time.monotonic() + timeout
    while True:
        got = probe()
        if got:
            return got
        if time.monotonic() > end:
            pytest.fail(f"{what}: not within {timeout:.0f} s\n{context()}")
        time.sleep(0.5)


class Pd:
    """The two namespaces, the servers and dhcpcd of one run."""

    def __init__(self, scratch: Path, variant: str) -> None:
        tag = f"{os.getpid()}-{variant}"
        self.isp_ns, self.edge_ns = f"keel-pd-isp-{tag}", f"keel-pd-edge-{tag}"
        self.scratch = scratch
        self.variant = variant
        self.shell: NsShell | None = None
        self.dhcpcd: subprocess.Popen | None = None
        self.dhcpcd_log = scratch / "dhcpcd.log"

    def wire(self) -> None:
        for ns in (self.isp_ns, self.edge_ns):
            run("ip", "netns", "add", ns)
            run("ip", "-n", ns, "link", "set", "lo", "up")
        run("ip", "link", "add", WAN, "netns", self.edge_ns, "type", "veth",
            "peer", "name", ISP, "netns", self.isp_ns)
        run("ip", "-n", self.edge_ns, "link", "add", LAN, "type", "veth", "peer", "name",
            "lan-host")
        for sysctl in CLIENT_SYSCTLS:
            run("ip", "netns", "exec", self.edge_ns, "sysctl", "-qw", sysctl)
        for dev in (WAN, LAN, "lan-host"):
            run("ip", "-n", self.edge_ns, "link", "set", dev, "up")

    def start_servers(self, isp: dhcpv6.Isp6) -> None:
        if self.variant == "host":
            self.root, device = None, ""
            # (Kea's /var/lib/kea: this host's Kea 2.2 makes none)
            self.shell = NsShell(self.isp_ns, ("/run", "/var/lib"))
        else:
            self.root, device = labtools.ROOT, str(labtools.disk())
            self.shell = NsShell(self.isp_ns, ("/run",))
        dhcpv6.start(self.shell, isp, root=self.root, device=device)

    def start_dhcpcd(self) -> None:
        config = render_dhcpcd(MODEL, duid_uuid(os.urandom(16)))
        assert config is not None
        path = self.scratch / "dhcpcd.conf"
        path.write_text(config)
        resolv = self.scratch / "resolv.conf"
        resolv.write_text("")
        # dhcpcd's own directories and resolv.conf, private (its config runs
        # no hooks; this holds even if it did); -d: its debug log, for failures
        private = ("mount -t tmpfs keel-test /run && mount -t tmpfs keel-test /var/lib/dhcpcd "
                   f"&& mount --bind {resolv} /etc/resolv.conf && exec \"$@\"")
        argv = [*dhcpcd_argv(MODEL, path), "-d"]
        with open(self.dhcpcd_log, "w") as log:
            self.dhcpcd = subprocess.Popen(
                ["ip", "netns", "exec", self.edge_ns, "unshare", "-m", "-u", "--propagation",
                 "private", "sh", "-c", private, "sh", *argv],
                stdout=log, stderr=subprocess.STDOUT)

    def logs(self) -> str:
        parts = [f"--- dhcpcd:\n{self.dhcpcd_log.read_text()[-3000:]}"]
        if self.shell:
            root = self.root or ""
            for name in (dhcpv6.KEA_LOG, dhcpv6.ROUTE_LOG, dhcpv6.RADVD_LOG):
                parts.append(f"--- {name}:\n{self.shell.read(root + name)[-3000:]}")
        return "\n".join(parts)

    def close(self) -> None:
        if self.shell:
            self.shell.run(dhcpv6.stop_command(self.root))
        if self.dhcpcd:
            self.dhcpcd.send_signal(signal.SIGTERM)
            try:
                self.dhcpcd.wait(10)
            except subprocess.TimeoutExpired:
                self.dhcpcd.kill()
        # whatever still runs in the two namespaces was started here
        for ns in (self.isp_ns, self.edge_ns):
            pids = run("ip", "netns", "pids", ns, check=False).stdout.split()
            for pid in pids:
                if self.shell and int(pid) == self.shell.holder.pid:
                    continue
                os.kill(int(pid), signal.SIGKILL)
        if self.shell:
            self.shell.close()
        for ns in (self.isp_ns, self.edge_ns):
            run("ip", "netns", "del", ns, check=False)


@pytest.fixture(params=["host", "labtools"])
def pd(request, tmp_path: Path) -> Iterator[Pd]:
    require_host()
    setup = Pd(tmp_path, request.param)
    try:
        setup.wire()
        yield setup
    finally:
        setup.close()


def lan_prefixes(pd: Pd, pool: ipaddress.IPv6Network) -> list[ipaddress.IPv6Interface]:
    """The LAN's /64s in `pool` still preferred."""
    return [a for a, preferred in addresses(pd.edge_ns, LAN)
            if a.network.prefixlen == 64 and a.network.subnet_of(pool) and preferred > 0]


def test_keel_dhcpcd_gets_a_prefix_and_follows_a_renumbering(pd: Pd):
    isp = dhcpv6.Isp6(ISP)
    pd.start_servers(isp)
    assert pd.shell is not None
    pd.start_dhcpcd()
    link = isp.link.network

    # the WAN: a SLAAC address (a /64 of the link's prefix, by the kernel)
    slaac = wait_for("a SLAAC address on the WAN", lambda: [
        a for a, _ in addresses(pd.edge_ns, WAN) if a.network == link], 30, pd.logs)
    assert slaac

    # the LAN: a /64 of the delegated /56, with the router's address ::1
    first = wait_for("a /64 of the first pool on the LAN",
                     lambda: lan_prefixes(pd, dhcpv6.POOL_FIRST), 30, pd.logs)
    assert len(first) == 1 and int(first[0].ip) - int(first[0].network.network_address) == 1
    delegated = first[0].network.supernet(new_prefix=dhcpv6.DELEGATED_LENGTH)

    # the isp routes the delegated prefix to the edge's link-local address,
    # and packets get there
    edge_ll = link_local(pd.edge_ns, WAN)
    routes = wait_for("the isp's route to the delegated prefix",
                      lambda: dhcpv6.delegated_routes(pd.shell), 10, pd.logs)
    assert routes == {delegated: (edge_ll, ISP)}, pd.logs()
    pd.shell.check(f"ping -6 -c 1 -w 5 {first[0].ip}")

    # the provider renumbers: within the renew timer (and far within the
    # old prefix's valid lifetime) the LAN's /64 is of the new pool, the
    # old one is gone, and so is the isp's route to it
    began = time.monotonic()
    isp = dhcpv6.renumber(pd.shell, isp, dhcpv6.POOL_SECOND, root=pd.root)
    life = isp.lifetimes
    second = wait_for("a /64 of the second pool on the LAN",
                      lambda: lan_prefixes(pd, dhcpv6.POOL_SECOND),
                      life.rebind + 5, pd.logs)
    took = time.monotonic() - began
    wait_for("the first pool's /64 gone from the LAN",
             lambda: not lan_prefixes(pd, dhcpv6.POOL_FIRST), 5, pd.logs)
    assert not [a for a, _ in addresses(pd.edge_ns, LAN) if a.network.subnet_of(
        dhcpv6.POOL_FIRST)], "removed, not only deprecated (dhcpcd gets lifetimes 0)"
    new = second[0].network.supernet(new_prefix=dhcpv6.DELEGATED_LENGTH)
    routes = wait_for("the isp's route to the new prefix alone",
                      lambda: (r := dhcpv6.delegated_routes(pd.shell)) and new in r and r,
                      10, pd.logs)
    assert routes == {new: (edge_ll, ISP)}, pd.logs()
    pd.shell.check(f"ping -6 -c 1 -w 5 {second[0].ip}")
    kea = re.search(r"Kea DHCPv6 server version (\S+) started",
                    pd.shell.read((pd.root or "") + dhcpv6.KEA_LOG))
    print(f"{pd.variant} (Kea {kea and kea.group(1)}): renumbered {delegated} -> {new} "
          f"in {took:.1f} s")
