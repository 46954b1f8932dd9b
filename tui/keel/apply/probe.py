"""Observe: the running state as the plan sees it."""

from __future__ import annotations

import ipaddress
import json
import os
import shutil
from pathlib import Path

from keel.parse import nftlist
from keel.parse.nic_identity import Port
from keel.parse.tcqdisc import Qdisc
from keel.render import dhcpcd, nft
from keel.system import links, nic_ports, pm_qos
from keel.system.commands import Runner
from keel.system.cpu_sysfs import CpuTuning, read_tuning
from keel.system.kernel import read_hostname
from keel.system.processes import pid_alive, pidfile_pid
from keel.system.qdiscs import read_qdiscs, root_qdisc
from keel.system.source import RunnerSource, SourceError

RUN_DIR = Path("/run/keel")


class Probe:
    """Reads the running state (through a Runner, so tests can fake it): the
    plan reads the system through this class and nothing else."""

    access_dir = Path("/data/keel/access")
    authorized_keys = Path("/data/keel/ssh/authorized_keys")
    dhcpcd_dir = dhcpcd.STATE_DIR  # keel's DUID for DHCPv6
    # where daemons are looked for, in this order, and only here (Buildroot:
    # /sbin/dhcpcd, Debian: /usr/sbin/dhcpcd). Never PATH: the boot's (BusyBox
    # init: /sbin first) and a login shell's (/usr/sbin first) differ, and on a
    # merged /usr each would name the same program by another path, a command
    # line that differs, and a daemon restarted for nothing
    program_dirs = ("/usr/sbin", "/sbin", "/usr/bin", "/bin")

    sysfs_root = "/"  # where /sys/class/net is read (tests: a captured tree)

    def __init__(self, runner: Runner, run_dir: Path = RUN_DIR) -> None:
        self.runner = runner
        self.source = RunnerSource(runner)
        self.run_dir = run_dir
        self._links: dict[str, dict] | None = None
        self._ports: list[Port] | None = None

    def json(self, argv: list[str]):
        proc = self.runner.run(argv, check=False)
        if proc.returncode != 0 or not proc.stdout.strip():
            return []
        return json.loads(proc.stdout)

    def links(self) -> dict[str, dict]:
        """Read once per plan: every component compares against the same state."""
        if self._links is None:
            self._links = {link["ifname"]: link
                           for link in self.json(["ip", "-j", "-d", "link", "show"])}
        return self._links

    def ports(self) -> list[Port]:
        """The NICs that can be a WAN or a LAN, with what names them across
        reboots (permanent MAC, PCI function): the config's mac: and pci:
        are resolved against these (keel.model.nic_roles)."""
        if self._ports is None:
            self._ports = nic_ports.read_ports(self.sysfs_root)
        return self._ports

    def addresses(self, ifname: str) -> set[str]:
        data = self.json(["ip", "-j", "addr", "show", "dev", ifname])
        return {f"{a['local']}/{a['prefixlen']}" for entry in data
                for a in entry.get("addr_info", []) if a.get("scope") != "link"}

    def dynamic_addresses(self, ifname: str) -> set[str]:
        """The addresses of `ifname` with a finite lifetime: put there by
        SLAAC (the kernel) or by dhcpcd (a /64 of the WAN's delegation),
        never by keel, whose addresses are static (forever)."""
        data = self.json(["ip", "-j", "addr", "show", "dev", ifname])
        return {f"{a['local']}/{a['prefixlen']}" for entry in data
                for a in entry.get("addr_info", []) if a.get("scope") != "link"
                and a.get("valid_life_time", 0xFFFFFFFF) != 0xFFFFFFFF}

    def qdiscs(self, ifname: str) -> list[Qdisc]:
        try:
            return read_qdiscs(self.source, ifname)
        except SourceError:
            return []

    def root_qdisc(self, ifname: str) -> Qdisc | None:
        return root_qdisc(self.qdiscs(ifname), ifname)

    def has_ingress(self, ifname: str) -> bool:
        return any(q.kind == "ingress" for q in self.qdiscs(ifname))

    def default_gateway(self, version: int = 4) -> tuple[str, str] | None:
        """(gateway, dev) of the default route of IPv4 or IPv6; an on-link
        route shows the same (its flags say onlink)."""
        family = ["-6"] if version == 6 else []
        for route in self.json(["ip", "-j", *family, "route", "show", "default"]):
            return route.get("gateway", ""), route.get("dev", "")
        return None

    def routes(self, ifname: str) -> set[str]:
        """The main table's routes through `ifname` that someone added (not
        the kernel's own for the link's subnet), as prefixes."""
        found = set()
        for family in ("-4", "-6"):
            for entry in self.json(["ip", family, "-j", "route", "show", "dev", ifname]):
                dst = entry.get("dst", "")
                if entry.get("protocol") != "kernel" and dst not in ("", "default"):
                    found.add(str(ipaddress.ip_network(dst, strict=False)))
        return found

    def rules(self) -> str:
        return self.runner.run(["ip", "rule", "show"], check=False).stdout

    def rules6(self) -> list[tuple[str, str, str, str]]:
        """The IPv6 rules as (priority, source prefix or "all", table,
        suppress_prefixlength or "")."""
        out = []
        for r in self.json(["ip", "-6", "-j", "rule", "show"]):
            src = r.get("src", "all")
            if src != "all" and "srclen" in r:
                src = str(ipaddress.ip_network(f"{src}/{r['srclen']}", strict=False))
            suppress = r.get("suppress_prefixlen", "")
            out.append((str(r.get("priority", "")), src, str(r.get("table", "")),
                        str(suppress)))
        return out

    def table_routes6(self, table: int) -> list[str]:
        """The destinations of the IPv6 routes in a routing table."""
        return [str(r.get("dst", "")) for r in
                self.json(["ip", "-6", "-j", "route", "show", "table", str(table)])]

    def ndp_proxies(self, ifname: str) -> set[str]:
        """The addresses the kernel answers neighbour solicitations for on
        `ifname` (`ip -6 neigh add proxy`)."""
        return {str(ipaddress.ip_address(e["dst"])) for e in
                self.json(["ip", "-6", "-j", "neigh", "show", "proxy", "dev", ifname])
                if "dst" in e}

    def sysctls(self, keys: list[str]) -> dict[str, str]:
        """The values of these sysctl keys (a key that does not exist, as
        for a device that is gone, is missing from the answer)."""
        if not keys:
            return {}
        proc = self.runner.run(["sysctl", *keys], check=False)
        found = {}
        for line in proc.stdout.splitlines():
            key, sep, value = line.partition(" = ")
            if sep and key in keys:
                found[key] = value.strip()
        return found

    def dhcpcd_duid(self) -> str | None:
        """keel's DUID (keel.render.dhcpcd), or None: none kept yet, or
        what is kept there is not a DUID (a new one is made then)."""
        try:
            text = (self.dhcpcd_dir / dhcpcd.DUID_FILE).read_text()
        except (OSError, UnicodeDecodeError):
            return None
        try:
            return dhcpcd.parse_duid(text[:1000])
        except dhcpcd.DuidError:
            return None

    def program(self, name: str) -> str | None:
        """A program's absolute path (start-stop-daemon wants one), or None:
        the first in program_dirs, the same whoever runs the apply."""
        return shutil.which(name, path=os.pathsep.join(self.program_dirs))

    def nft_table_present(self) -> bool:
        argv = ["nft", "list", "table", "inet", "keel"]
        return self.runner.run(argv, check=False).returncode == 0

    def nft_listing(self) -> str | None:
        """The ruleset loaded now, without counters or set contents
        (keel.parse.nftlist.normalized); None when nft cannot list it."""
        proc = self.runner.run(list(nft.LIST_STATELESS), check=False)
        return nftlist.normalized(proc.stdout) if proc.returncode == 0 else None

    def pairing_waiting(self) -> list[tuple[int, int]]:
        """(port, seconds left) of each pairing port open now that `keel pair`
        added (a timeout it sets; a stray by hand is not one: nftlist.stray)."""
        proc = self.runner.run(list(nft.LIST_PAIRING), check=False)
        if proc.returncode != 0:
            return []
        return [(e.port, e.expires_s) for e in nftlist.set_elements(proc.stdout)
                if e.expires_s is not None and e.expires_s > 0
                and nftlist.stray(e, nft.PAIRING_LONGEST_S) is None]

    def stamp(self, name: str) -> str | None:
        try:
            value = (self.run_dir / "state" / name).read_text().strip()
        except OSError:
            return None
        return value or None

    def cpu_tuning(self) -> CpuTuning:
        return read_tuning()

    def pid_alive(self, pidfile: str) -> bool:
        pid = pidfile_pid(pidfile)
        return pid is not None and pid_alive(pid)

    def forwarding(self) -> bool:
        """IPv4 and IPv6 forwarding both on (read through the runner)."""
        proc = self.runner.run(["sysctl", "-n", "net.ipv4.ip_forward",
                                "net.ipv6.conf.all.forwarding"], check=False)
        return proc.returncode == 0 and proc.stdout.split() == ["1", "1"]

    def hostname(self) -> str | None:
        return read_hostname()

    def cpu_count(self) -> int:
        return os.cpu_count() or 1

    def pm_qos_available(self) -> bool:
        """Whether a CPU latency request can be held (/dev/cpu_dma_latency)."""
        return pm_qos.pm_qos_available()

    def rps_mask(self, ifname: str) -> int | None:
        """The RPS mask of a single-queue NIC (None: RPS is left alone)."""
        return links.rps_mask(ifname)
