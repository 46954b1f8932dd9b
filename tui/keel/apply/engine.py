"""Compare the desired state (a RouterModel) with the running system and
produce the steps that make them equal; then run them.

Every component is compared first, so applying the same config twice runs
nothing the second time (no qdisc is replaced, no counter reset, no tunnel
session dropped). `--dry-run` prints the same steps without running them.
"""

from __future__ import annotations

import hashlib
import ipaddress
import json
import os
import signal
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from keel.model import RouterModel, Wan
from keel.render import cake, dnsmasq, nft, wan_route, wireguard
from keel.system.commands import Runner
from keel.tuning import cpu as cpu_tuning

RUN_DIR = Path("/run/keel")


@dataclass(frozen=True)
class Step:
    component: str
    why: str
    commands: tuple[tuple[str, ...], ...] = ()
    # files written before the commands run: path -> (text, mode); contents
    # of mode-0600 files are secret and never shown
    files: tuple[tuple[str, str, int], ...] = ()
    # (path, value): written after the commands succeeded, read by the next plan
    stamps: tuple[tuple[str, str], ...] = ()
    action: Callable[[], None] | None = field(default=None, compare=False)

    def describe(self) -> list[str]:
        out = [f"{self.component}: {self.why}"]
        for path, _text, mode in self.files:
            out.append(f"  write {path}" + (" (secret, mode 0600)" if mode == 0o600 else ""))
        out += ["  " + " ".join(cmd) for cmd in self.commands]
        return out


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


class Probe:
    """Reads the running state (through a Runner, so tests can fake it)."""

    def __init__(self, runner: Runner, run_dir: Path = RUN_DIR) -> None:
        self.runner = runner
        self.run_dir = run_dir
        self.notes: list[str] = []  # what actions reported while they ran
        self._links: dict[str, dict] | None = None

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

    def addresses(self, ifname: str) -> set[str]:
        data = self.json(["ip", "-j", "addr", "show", "dev", ifname])
        return {f"{a['local']}/{a['prefixlen']}" for entry in data
                for a in entry.get("addr_info", []) if a.get("scope") != "link"}

    def root_qdisc(self, ifname: str) -> dict | None:
        for q in self.json(["tc", "-j", "qdisc", "show", "dev", ifname, "root"]):
            return q
        return None

    def has_ingress(self, ifname: str) -> bool:
        return any(q.get("kind") == "ingress"
                   for q in self.json(["tc", "-j", "qdisc", "show", "dev", ifname]))

    def default_gateway(self, version: int = 4) -> tuple[str, str] | None:
        """(gateway, dev) of the default route of IPv4 or IPv6; an on-link
        route shows the same (its flags say onlink)."""
        family = ["-6"] if version == 6 else []
        for route in self.json(["ip", "-j", *family, "route", "show", "default"]):
            return route.get("gateway", ""), route.get("dev", "")
        return None

    def rules(self) -> str:
        return self.runner.run(["ip", "rule", "show"], check=False).stdout

    def nft_table_present(self) -> bool:
        argv = ["nft", "list", "table", "inet", "keel"]
        return self.runner.run(argv, check=False).returncode == 0

    def stamp(self, name: str) -> str | None:
        try:
            value = (self.run_dir / "state" / name).read_text().strip()
        except OSError:
            return None
        return value or None

    def cpu_tuning(self) -> cpu_tuning.CpuTuning:
        return cpu_tuning.read_tuning()

    def pid_alive(self, pidfile: str) -> bool:
        try:
            pid = int(Path(pidfile).read_text().split()[0])
        except (OSError, ValueError, IndexError):
            return False
        return Path(f"/proc/{pid}").exists()


def _kill_pidfile(pidfile: str, wait: float = 3.0) -> None:
    try:
        pid = int(Path(pidfile).read_text().split()[0])
        os.kill(pid, signal.SIGTERM)
    except (OSError, ValueError, IndexError):
        Path(pidfile).unlink(missing_ok=True)
        return
    deadline = time.monotonic() + wait
    while Path(f"/proc/{pid}").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    Path(pidfile).unlink(missing_ok=True)


def _stop(component: str, why: str, pidfile: str) -> Step:
    """Stop a daemon by its pidfile (whoever owns the file: dnsmasq drops root)."""
    return Step(component, why, action=lambda: _kill_pidfile(pidfile))


def _stamp(run_dir: Path, name: str, value: str) -> tuple[tuple[str, str], ...]:
    return ((str(run_dir / "state" / name), value + "\n"),)


# --- components ---------------------------------------------------------------
def plan_interfaces(model: RouterModel, probe: Probe) -> list[Step]:
    steps = []
    links = probe.links()
    wanted: list[tuple[str, list[str]]] = [(lan.interface, [lan.address]) for lan in model.lans]
    wanted += [(w.interface, [w.address] if (not w.dhcp and w.address) else []) for w in model.wans]
    for ifname, addrs in wanted:
        if ifname not in links:
            steps.append(Step("interfaces", f"{ifname} is missing: nothing to configure on it"))
            continue
        cmds: list[tuple[str, ...]] = []
        if "UP" not in links[ifname].get("flags", []):
            cmds.append(("ip", "link", "set", ifname, "up"))
        have = probe.addresses(ifname)
        want = {str(ipaddress.ip_interface(a)) for a in addrs}
        for addr in addrs:
            if str(ipaddress.ip_interface(addr)) not in have:
                cmds.append(("ip", "addr", "replace", addr, "dev", ifname))
        if addrs:  # statically addressed: addresses keel did not ask for go
            for addr in sorted(have - want):
                cmds.append(("ip", "addr", "del", addr, "dev", ifname))
        if cmds:
            what = ", ".join(addrs) or "no static address"
            steps.append(Step("interfaces", f"{ifname} up with {what}", tuple(cmds)))
    for wan in model.wans:
        route = wan_route.default_route_command(wan)
        if route is None or wan.gateway is None:
            continue
        version = ipaddress.ip_address(wan.gateway).version
        if probe.default_gateway(version) != (wan.gateway, wan.interface):
            onlink = " (on-link)" if route[-1] == "onlink" else ""
            steps.append(Step("routes", f"default route via {wan.gateway}{onlink}",
                              (tuple(route),)))
    return steps


def plan_dhcp_client(model: RouterModel, probe: Probe) -> list[Step]:
    steps = []
    links = probe.links()
    for wan in model.wans:
        if not wan.dhcp or wan.interface not in links:
            continue
        pidfile = f"{probe.run_dir}/udhcpc-{wan.interface}.pid"
        if probe.pid_alive(pidfile):
            continue
        steps.append(Step("dhcp-client", f"DHCP on {wan.interface}", ((
            "udhcpc", "-i", wan.interface, "-b", "-S", "-x", "hostname:" + model.system.hostname,
            "-p", pidfile, "-s", "/usr/share/keel/udhcpc.script"),)))
    return steps


def plan_tunnel(model: RouterModel, probe: Probe, private_key: Callable[[], str]) -> list[Step]:
    t = model.wireguard
    links = probe.links()
    if t is None:
        # a tunnel keel made before, now gone from the config
        stale = [name for name in links
                 if links[name].get("linkinfo", {}).get("info_kind") == "wireguard"
                 and probe.stamp(f"{name}.sha") is not None]
        return [Step("wireguard", f"remove {name}", (("ip", "link", "del", name),),
                     stamps=_stamp(probe.run_dir, f"{name}.sha", ""))
                for name in stale]
    steps = []
    if t.interface not in links:
        steps.append(Step("wireguard", f"create {t.interface}",
                          (("ip", "link", "add", t.interface, "type", "wireguard"),)))
        links = {}
    conf_path = probe.run_dir / f"{t.interface}.conf"
    # the stamp holds a digest of the rendered file with a digest of the key in
    # place of the key: a new key or any other change makes it differ
    digest = _sha(wireguard.render_syncconf(t, _sha(private_key())))
    if probe.stamp(f"{t.interface}.sha") != digest or t.interface not in links:
        def write_conf() -> None:
            conf_path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(conf_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "w") as f:
                f.write(wireguard.render_syncconf(t, private_key()))
        steps.append(Step("wireguard", f"{t.interface}: port {t.listen_port}, "
                                       f"{len(t.peer)} peer(s)",
                          (("wg", "syncconf", t.interface, str(conf_path)),),
                          stamps=_stamp(probe.run_dir, f"{t.interface}.sha", digest),
                          action=write_conf))
    cmds: list[tuple[str, ...]] = []
    link = links.get(t.interface, {})
    if link.get("mtu") != t.mtu:
        cmds.append(("ip", "link", "set", t.interface, "mtu", str(t.mtu)))
    have = probe.addresses(t.interface) if link else set()
    want = {str(ipaddress.ip_interface(a)) for a in t.address}
    for addr in t.address:
        if str(ipaddress.ip_interface(addr)) not in have:
            cmds.append(("ip", "addr", "replace", addr, "dev", t.interface))
    for addr in sorted(have - want):
        cmds.append(("ip", "addr", "del", addr, "dev", t.interface))
    if "UP" not in link.get("flags", []):
        cmds.append(("ip", "link", "set", t.interface, "up"))
    if cmds:
        steps.append(Step("wireguard", f"{t.interface} addresses, MTU {t.mtu}, up", tuple(cmds)))
    routes = wireguard.route_commands(t)
    if routes and (cmds or probe.stamp(f"{t.interface}.routes") != _sha(repr(routes))):
        steps.append(Step("routes", "routes through the tunnel", tuple(map(tuple, routes)),
                          stamps=_stamp(probe.run_dir, f"{t.interface}.routes",
                                        _sha(repr(routes)))))
    rules = probe.rules()
    for rule in wireguard.policy_rules(t):
        prio, *selector = rule
        if f"{prio}:\t{' '.join(selector)}" not in rules:
            steps.append(Step("routes", f"policy rule {prio}",
                              (("ip", "rule", "add", "priority", prio,
                                *[s for s in selector if s not in ("from", "all")]),)))
    return steps


def _cake_matches(q: dict | None, rate_kbit: int, diffserv: str) -> bool:
    if not q or q.get("kind") != "cake":
        return False
    opts = q.get("options", {})
    return opts.get("bandwidth") == rate_kbit * 1000 // 8 and opts.get("diffserv") == diffserv


def plan_shaping(model: RouterModel, probe: Probe) -> list[Step]:
    steps = []
    tun = model.wireguard.interface if model.wireguard else None
    for wan in model.wans:
        steps += _plan_wan_shaping(wan, tun, probe)
    return steps


def _plan_wan_shaping(wan: Wan, tun: str | None, probe: Probe) -> list[Step]:
    steps = []
    s = wan.shaping
    links = probe.links()
    dev, _extra = cake.shaped_device(wan, tun)
    if dev not in links and dev != tun:  # the tunnel is made by an earlier step
        return []
    if dev != wan.interface and wan.interface in links:
        # shaping moved to the tunnel: the WAN gets plain fq_codel, no IFB
        bare = Wan(wan.interface, shaping=type(s)())
        root = probe.root_qdisc(wan.interface)
        if root and root.get("kind") == "cake":
            steps.append(Step("shaping", f"CAKE moves from {wan.interface} to {dev}",
                              tuple(map(tuple, cake.egress_commands(bare)))))
        if probe.has_ingress(wan.interface):
            cmds = [c for c in cake.ingress_commands(bare)
                    if c[0] != "ip" or cake.ifb_name(wan.interface) in links]
            steps.append(Step("shaping", f"no IFB on {wan.interface}", tuple(map(tuple, cmds))))
    egress = cake.egress_commands(wan, tun)
    stamp_egress = _sha(repr(egress))
    root = probe.root_qdisc(dev)
    if s.upload_kbit > 0:
        ok = _cake_matches(root, s.upload_kbit, s.diffserv)
    else:
        ok = bool(root) and root.get("kind") == "fq_codel"
    if not ok or probe.stamp(f"cake-{dev}.sha") != stamp_egress:
        why = (f"CAKE {s.upload_kbit} kbit/s on {dev} egress" if s.upload_kbit
               else f"no egress shaping on {dev} (fq_codel)")
        steps.append(Step("shaping", why, tuple(map(tuple, egress)),
                          stamps=_stamp(probe.run_dir, f"cake-{dev}.sha", stamp_egress)))
    ifb = cake.ifb_name(dev)
    ingress = cake.ingress_commands(wan, tun)
    stamp_ingress = _sha(repr(ingress))
    if s.download_kbit > 0:
        ok = (ifb in links and _cake_matches(probe.root_qdisc(ifb), s.download_kbit, s.diffserv)
              and probe.has_ingress(dev)
              and probe.stamp(f"cake-{ifb}.sha") == stamp_ingress)
        if not ok:
            cmds = ingress[1:] if ifb in links else ingress  # the IFB exists
            if probe.has_ingress(dev):
                # a matchall filter cannot be replaced ("File exists"): the
                # ingress qdisc goes, its filter with it, and both come back
                cmds = [["tc", "qdisc", "del", "dev", dev, "handle", cake.INGRESS_HANDLE,
                         "ingress"], *cmds]
            steps.append(Step("shaping", f"CAKE {s.download_kbit} kbit/s on {dev} ingress "
                                         f"via {ifb}", tuple(map(tuple, cmds)),
                              stamps=_stamp(probe.run_dir, f"cake-{ifb}.sha", stamp_ingress)))
    elif ifb in links or probe.has_ingress(dev):
        cmds = [c for c in ingress if c[0] != "ip" or ifb in links]
        if not probe.has_ingress(dev):
            cmds = [c for c in cmds if c[0] != "tc"]
        steps.append(Step("shaping", f"no ingress shaping on {dev}", tuple(map(tuple, cmds))))
    return steps


def plan_firewall(model: RouterModel, probe: Probe) -> list[Step]:
    ruleset = nft.render_ruleset(model)
    digest = _sha(ruleset)
    if probe.stamp("nft.sha") == digest and probe.nft_table_present():
        return []
    path = probe.run_dir / "ruleset.nft"
    return [Step("firewall", "load the nftables ruleset (checked with nft -c first)",
                 (("nft", "-f", str(path)),),
                 ((str(path), ruleset, 0o644),), _stamp(probe.run_dir, "nft.sha", digest))]


def plan_dnsmasq(model: RouterModel, probe: Probe) -> list[Step]:
    conf = dnsmasq.render_dnsmasq(model)
    pidfile = str(probe.run_dir / "dnsmasq.pid")
    running = probe.pid_alive(pidfile)
    if conf is None:
        if running:
            return [_stop("dhcp-dns", "no LAN: stop dnsmasq", pidfile)]
        return []
    digest = _sha(conf)
    if running and probe.stamp("dnsmasq.sha") == digest:
        return []
    path = probe.run_dir / "dnsmasq.conf"
    steps = [_stop("dhcp-dns", "stop the old dnsmasq", pidfile)] if running else []
    steps.append(Step("dhcp-dns", f"dnsmasq on {', '.join(lan.interface for lan in model.lans)}",
                      (("dnsmasq", f"--conf-file={path}", f"--pid-file={pidfile}"),),
                      ((str(path), conf, 0o644),),
                      _stamp(probe.run_dir, "dnsmasq.sha", digest)))
    return steps


def plan_iperf3(model: RouterModel, probe: Probe) -> list[Step]:
    t = model.wireguard
    pidfile = str(probe.run_dir / "iperf3.pid")
    if t is None or not model.selftest.iperf3_server or not t.address:
        if probe.pid_alive(pidfile):
            return [_stop("iperf3", "stop the iperf3 server", pidfile)]
        return []
    if probe.pid_alive(pidfile):
        return []
    addr = str(ipaddress.ip_interface(t.address[0]).ip)
    return [Step("iperf3", f"iperf3 server on the tunnel address {addr} only",
                 (("iperf3", "-s", "-D", "-B", addr, "-I", pidfile),))]


def plan_tuning(model: RouterModel, probe: Probe) -> list[Step]:
    want = model.tuning
    steps = []
    state = probe.cpu_tuning()
    if state.has_cpufreq and any(f.governor != want.governor for f in state.freq.values()):
        steps.append(Step("tuning", f"governor {want.governor} on every CPU",
                          action=lambda: probe.notes.extend(
                              cpu_tuning.set_governor(want.governor))))
    pidfile = str(probe.run_dir / "pmqos.pid")
    holding = probe.pid_alive(pidfile)
    if want.hold_latency and cpu_tuning.PM_QOS_DEVICE.exists() and (
            not holding or probe.stamp("pmqos") != str(want.max_cstate_latency_us)):
        if holding:
            steps.append(_stop("tuning", "release the old CPU latency request", pidfile))
        steps.append(Step("tuning", f"hold CPU wake-up latency <= {want.max_cstate_latency_us} us "
                                    "(deep C-states off)",
                          (("start-stop-daemon", "-S", "-b", "-m", "-p", pidfile,
                            "-x", sys.executable, "--", "-m", "keel.tuning.hold",
                            str(want.max_cstate_latency_us)),),
                          stamps=_stamp(probe.run_dir, "pmqos", str(want.max_cstate_latency_us))))
    elif not want.hold_latency and holding:
        steps.append(_stop("tuning", "release the CPU latency request", pidfile))
    ncpus = os.cpu_count() or 1
    if want.rps and ncpus > 1:
        mask = cpu_tuning.cpu_mask(ncpus)
        for ifname in [w.interface for w in model.wans] + [lan.interface for lan in model.lans]:
            rx = sorted((cpu_tuning.NET_ROOT / ifname / "queues").glob("rx-*"))
            if len(rx) != 1:
                continue
            try:
                have = int((rx[0] / "rps_cpus").read_text().strip().replace(",", ""), 16)
            except (OSError, ValueError):
                continue
            if have != int(mask, 16):
                steps.append(Step("tuning", f"RPS/XPS on {ifname} over CPUs 0-{ncpus - 1} "
                                            f"(mask {mask})",
                                  action=lambda i=ifname: probe.notes.extend(
                                      cpu_tuning.set_rps_xps(i, ncpus))))
    return steps


# --- the whole plan -------------------------------------------------------------
def plan(model: RouterModel, probe: Probe, private_key: Callable[[], str]) -> list[Step]:
    return [
        *plan_interfaces(model, probe),
        *plan_dhcp_client(model, probe),
        *plan_tunnel(model, probe, private_key),
        *plan_shaping(model, probe),
        *plan_firewall(model, probe),
        *plan_dnsmasq(model, probe),
        *plan_iperf3(model, probe),
        *plan_tuning(model, probe),
    ]


def check_ruleset(model: RouterModel, runner: Runner, run_dir: Path = RUN_DIR) -> None:
    """`nft -c` on the ruleset before anything is applied (raises CommandError)."""
    path = run_dir / "ruleset.check.nft"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(nft.render_ruleset(model))
    runner.run(["nft", "-c", "-f", str(path)])


def execute(steps: list[Step], runner: Runner, report: Callable[[str], None] = print) -> None:
    for step in steps:
        report(f"{step.component}: {step.why}")
        for path, text, mode in step.files:
            p = Path(path)
            p.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(p, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
            with os.fdopen(fd, "w") as f:
                f.write(text)
        if step.action is not None:
            step.action()
        for cmd in step.commands:
            runner.run(list(cmd))
        for path, value in step.stamps:
            p = Path(path)
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text(value)
