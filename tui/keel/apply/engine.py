"""Plan: compare the desired state (a RouterModel) with the running system
as the Probe reads it (keel.apply.probe, observe) and produce the steps that
make them equal; keel.apply.execute runs them.

Every component is compared first, so applying the same config twice runs
nothing the second time (no qdisc is replaced, no counter reset, no tunnel
session dropped). `--dry-run` prints the same steps without running them.
The planning functions read the system only through the Probe."""

from __future__ import annotations

import hashlib
import ipaddress
import os
import sys
from collections.abc import Callable
from pathlib import Path

from keel.access import ssh_keys
from keel.adaptive import target
from keel.apply import ipv6 as ipv6_plan
from keel.apply.execute import Outcome, execute
from keel.apply.fleet import plan_fleet_agent, plan_fleet_watch
from keel.apply.metrics import plan_metrics
from keel.apply.probe import RUN_DIR, Probe
from keel.apply.steps import Step, stop_daemon
from keel.model import RouterModel, Tuning, Wan
from keel.model.router import Shaping
from keel.parse import nftlist
from keel.parse.tcqdisc import Qdisc
from keel.render import cake, dnsmasq, ipv6, nft, wan_route, wireguard
from keel.system.commands import Runner
from keel.tuning import cpu as cpu_tuning

__all__ = ["RUN_DIR", "Outcome", "Probe", "Step", "check_ruleset", "execute", "plan"]


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def _stamp(run_dir: Path, name: str, value: str) -> tuple[tuple[str, str], ...]:
    return ((str(run_dir / "state" / name), value + "\n"),)


# --- components ---------------------------------------------------------------
def plan_interfaces(model: RouterModel, probe: Probe) -> list[Step]:
    steps = []
    links = probe.links()
    wanted: list[tuple[str, list[str]]] = list(ipv6.lan_addresses(model).items())
    wanted += [(w.interface, [w.address] if (not w.dhcp and w.address) else []) for w in model.wans]
    flushed = set(_stale_dhcp_ports(model, probe)) & set(links)
    for ifname, addrs in wanted:
        if ifname not in links:
            steps.append(Step("interfaces", f"{ifname} is missing: nothing to configure on it"))
            continue
        cmds: list[tuple[str, ...]] = []
        if "UP" not in links[ifname].get("flags", []):
            cmds.append(("ip", "link", "set", ifname, "up"))
        have = probe.addresses(ifname)
        if ifname in flushed:  # its IPv4 addresses are gone by then: all are added
            have = {a for a in have if ":" in a}
        want = {str(ipaddress.ip_interface(a)) for a in addrs}
        for addr in addrs:
            if str(ipaddress.ip_interface(addr)) not in have:
                cmds.append(("ip", "addr", "replace", addr, "dev", ifname))
        if addrs:  # statically addressed: addresses keel did not ask for go
            # (not those with a lifetime: SLAAC's, or a /64 dhcpcd put there)
            for addr in sorted(have - want - probe.dynamic_addresses(ifname)):
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


def plan_hostname(model: RouterModel, probe: Probe) -> list[Step]:
    """The kernel's host name (the shell prompt, logs; DHCP sends it too)."""
    name = model.system.hostname
    if probe.hostname() == name:
        return []
    return [Step("system", f"host name {name}", (("hostname", name),))]


def _stale_dhcp_ports(model: RouterModel, probe: Probe) -> list[str]:
    """The ports whose DHCP client runs though they are no longer a DHCP WAN."""
    wanted = {wan.interface for wan in model.wans if wan.dhcp}
    return [port for pidfile in sorted(Path(probe.run_dir).glob("udhcpc-*.pid"))
            if (port := pidfile.name.removeprefix("udhcpc-").removesuffix(".pid")) not in wanted
            and probe.pid_alive(str(pidfile))]


def plan_stale_dhcp_clients(model: RouterModel, probe: Probe) -> list[Step]:
    """Stop the DHCP client of a port that is no longer a DHCP WAN (the WAN
    moved to another port, or became static): left running, it took a lease
    on whatever network the port now faces (another router's LAN), with its
    address and default route. Once it has exited, the port's IPv4 addresses
    are flushed: a lease it took after the probe is gone too, and
    plan_interfaces (planned on the same probe, run after) adds every address
    keel wants there."""
    links = probe.links()
    return [stop_daemon("dhcp-client", f"stop the DHCP client on {port} (no longer a DHCP WAN)",
                        f"{probe.run_dir}/udhcpc-{port}.pid",
                        (("ip", "-4", "addr", "flush", "dev", port, "scope", "global"),)
                        if port in links else ())
            for port in _stale_dhcp_ports(model, probe)]


def plan_dhcp_client(model: RouterModel, probe: Probe) -> list[Step]:
    steps = []
    links = probe.links()
    for wan in model.wans:
        if not wan.dhcp or wan.interface not in links:
            continue
        pidfile = f"{probe.run_dir}/udhcpc-{wan.interface}.pid"
        if probe.pid_alive(pidfile):
            continue
        # in the foreground of its own detached process: the boot goes on at
        # once (udhcpc -b would hold it for 3 discovers of 3 s with no server)
        steps.append(Step("dhcp-client", f"DHCP on {wan.interface} (in the background)",
                          started=((
                              "udhcpc", "-f", "-i", wan.interface, "-S",
                              "-x", "hostname:" + model.system.hostname, "-p", pidfile,
                              "-s", "/usr/share/keel/udhcpc.script"),)))
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
    lan6 = ipv6.lan_tunnel_prefixes(model)
    peers6 = ipv6.routed_peer_prefixes(t, model.ipv6.routed_prefix)
    if t.interface not in links:
        steps.append(Step("wireguard", f"create {t.interface}",
                          (("ip", "link", "add", t.interface, "type", "wireguard"),)))
        links = {}
    conf_path = probe.run_dir / f"{t.interface}.conf"
    # the stamp holds a digest of the rendered file with a digest of the key in
    # place of the key: a new key or any other change makes it differ
    digest = _sha(wireguard.render_syncconf(t, _sha(private_key()), model.forwards, lan6))
    if probe.stamp(f"{t.interface}.sha") != digest or t.interface not in links:
        def write_conf() -> None:
            conf_path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(conf_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "w") as f:
                f.write(wireguard.render_syncconf(t, private_key(), model.forwards, lan6))
        steps.append(Step("wireguard", f"{t.interface}: port {t.listen_port}, "
                                       f"{len(t.peer)} peer(s)",
                          # the file holds the private key: gone once WireGuard has it
                          (("wg", "syncconf", t.interface, str(conf_path)),
                           ("rm", "-f", str(conf_path))),
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
    routes = wireguard.route_commands(t, model.forwards, lan6, peers6)
    # routes keel put through the tunnel that the config no longer lists
    want = set(wireguard.main_table_prefixes(t, peers6))
    stale = sorted(probe.routes(t.interface) - want) if link else []
    gone = [("ip", *(["-6"] if ":" in p else []), "route", "del", p, "dev", t.interface)
            for p in stale]
    if gone or (routes and (cmds or probe.stamp(f"{t.interface}.routes")
                            != _sha(repr(routes)))):
        steps.append(Step("routes", "routes through the tunnel",
                          (*map(tuple, routes), *gone),
                          stamps=_stamp(probe.run_dir, f"{t.interface}.routes",
                                        _sha(repr(routes)))))
    rules = probe.rules()
    wanted = wireguard.policy_rules(t, model.forwards)
    for rule in wanted:
        prio, *selector = rule
        if f"{prio}:\t{' '.join(selector)}" not in rules:
            steps.append(Step("routes", f"policy rule {prio}",
                              (("ip", "rule", "add", "priority", prio,
                                *[s for s in selector if s not in ("from", "all")]),)))
    prio = wireguard.FORWARD_RULE_PRIORITY
    if f"\n{prio}:" in f"\n{rules}" and not any(r[0] == prio for r in wanted):
        steps.append(Step("routes", f"policy rule {prio} removed (no inner forward left)",
                          (("ip", "rule", "del", "priority", prio),)))
    steps += _plan_loose_rp(t.interface, model, probe)
    return steps


def _plan_loose_rp(dev: str, model: RouterModel, probe: Probe) -> list[Step]:
    """Loose reverse-path filtering on the tunnel of an edge with inner
    forwards: their packets come in through it from clients that the main
    table reaches by the WAN (strict filtering would drop them)."""
    if not any(f.role == "inner" for f in model.forwards):
        return []
    key = f"net.ipv4.conf.{dev}.rp_filter"
    proc = probe.runner.run(["sysctl", "-n", key], check=False)
    if proc.returncode == 0 and proc.stdout.strip() == "2":
        return []
    return [Step("routes", f"{dev}: loose reverse-path filter (inner forwards)",
                 (("sysctl", "-qw", f"{key}=2"),))]


def _cake_matches(q: Qdisc | None, shaping: Shaping, direction: str) -> bool:
    """The CAKE there is this config's: its diffserv, and its rate the one
    asked for (adaptive: any rate between the direction's min and max, where
    keel.adaptive has put it)."""
    if q is None or not q.is_cake:
        return False
    rate = q.options.get("bandwidth")
    return (isinstance(rate, int) and rate % 125 == 0
            and shaping.accepts(direction, rate * 8 // 1000)
            and q.options.get("diffserv") == shaping.diffserv)


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
    # shaping left a device (to the tunnel, back to the WAN, or off): unshape it
    for other in (wan.interface, tun):
        if other and other != dev and other in links:
            steps += _plan_unshape(wan, other, tun, probe)
    egress = cake.egress_commands(wan, tun)
    stamp_egress = _sha(repr(egress))
    root = probe.root_qdisc(dev)
    if s.upload_kbit > 0:
        ok = _cake_matches(root, s, "upload")
    else:
        ok = root is not None and root.kind == "fq_codel"
    if not ok or probe.stamp(f"cake-{dev}.sha") != stamp_egress:
        why = (f"CAKE {s.upload_kbit} kbit/s on {dev} egress" if s.upload_kbit
               else f"no egress shaping on {dev} (fq_codel)")
        steps.append(Step("shaping", why, tuple(map(tuple, egress)),
                          stamps=_stamp(probe.run_dir, f"cake-{dev}.sha", stamp_egress)))
    ifb = cake.ifb_name(dev)
    ingress = cake.ingress_commands(wan, tun)
    stamp_ingress = _sha(repr(ingress))
    if s.download_kbit > 0:
        ok = (ifb in links and _cake_matches(probe.root_qdisc(ifb), s, "download")
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


def _plan_unshape(wan: Wan, dev: str, tun: str | None, probe: Probe) -> list[Step]:
    """`dev` (the WAN or the tunnel) is no longer where CAKE sits: its CAKE,
    ingress redirect and IFB go. The WAN gets plain fq_codel (keel's "off"),
    the tunnel its kernel default. Left in place, CAKE would go on shaping at
    the old rates while the config says otherwise."""
    steps = []
    links = probe.links()
    on_tunnel = dev == tun
    bare = Wan(wan.interface, shaping=type(wan.shaping)(attach="tunnel" if on_tunnel else "wan"))
    root = probe.root_qdisc(dev)
    if root is not None and root.is_cake:
        egress = ([["tc", "qdisc", "del", "dev", dev, "root"]] if on_tunnel
                  else cake.egress_commands(bare, tun))
        steps.append(Step("shaping", f"CAKE leaves {dev}", tuple(map(tuple, egress))))
    ifb = cake.ifb_name(dev)
    has_ingress = probe.has_ingress(dev)
    if has_ingress or ifb in links:
        cmds = [c for c in cake.ingress_commands(bare, tun)
                if (c[0] != "ip" or ifb in links) and (c[0] != "tc" or has_ingress)]
        steps.append(Step("shaping", f"no IFB on {dev}", tuple(map(tuple, cmds))))
    return steps


LIVE_STAMP = "nft.live"  # the ruleset as listed right after keel loaded it


def record_live_ruleset(runner: Runner, run_dir: Path) -> list[str]:
    """Right after keel loads its ruleset: the listing nft gives back
    (without counters or set contents), kept to see drift later."""
    path = run_dir / "state" / LIVE_STAMP
    proc = runner.run(list(nft.LIST_STATELESS), check=False)
    listing = nftlist.normalized(proc.stdout) if proc.returncode == 0 else ""
    if not listing:
        path.unlink(missing_ok=True)
        return ["could not list the ruleset back: the next apply loads it again"]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(listing + "\n")
    return []


def pairing_elements(runner: Runner) -> list[nftlist.Element]:
    """The pairing set's elements as the kernel has them now; [] when nft
    cannot list the set (then the listing of the ruleset shows it gone)."""
    proc = runner.run(list(nft.LIST_PAIRING), check=False)
    return nftlist.set_elements(proc.stdout) if proc.returncode == 0 else []


def plan_firewall(model: RouterModel, probe: Probe) -> list[Step]:
    """The ruleset is loaded again when the config's differs from the one
    keel loaded (its stamp), or when the live ruleset differs from what nft
    listed right after that load (drift: a rule added or removed by hand, a
    leftover, another table), or when the pairing set holds an element that
    is not `keel pair`'s (no timeout: a port open forever; a timeout longer
    than keel sets): the listing leaves set contents out, so they are read
    on their own. A pairing port waiting now is carried over with what
    remains of its timeout (`keel pair` goes on waiting); a stray is not."""
    ruleset = nft.render_ruleset(model)
    digest = _sha(ruleset)
    recorded, live = probe.stamp(LIVE_STAMP), probe.nft_listing()
    elements = pairing_elements(probe.runner)
    strays = [why for e in elements if (why := nftlist.stray(e, nft.PAIRING_LONGEST_S))]
    if probe.stamp("nft.sha") != digest:
        why = "load the nftables ruleset"
    elif recorded is None or live is None:
        why = "load the nftables ruleset (none recorded as loaded by keel)"
    elif live != recorded:
        why = ("load the nftables ruleset again: it drifted from what keel loaded ("
               + "; ".join(nftlist.drift(recorded, live)) + ")")
    elif strays:
        why = ("load the nftables ruleset again: the pairing set holds what keel pair did "
               "not add (" + "; ".join(strays) + ")")
    else:
        return []
    waiting = [(e.port, e.expires_s) for e in elements
               if nftlist.stray(e, nft.PAIRING_LONGEST_S) is None
               and e.expires_s is not None and e.expires_s > 0]
    if waiting:
        why += f"; the pairing port waiting keeps its {waiting[0][1]} s"
    path = probe.run_dir / "ruleset.nft"
    return [Step("firewall", f"{why} (checked with nft -c first)",
                 (("nft", "-f", str(path)),),
                 ((str(path), nft.render_ruleset(model, waiting), 0o644),),
                 _stamp(probe.run_dir, "nft.sha", digest)),
            Step("firewall", "note the ruleset as loaded, to see drift later",
                 action=lambda: record_live_ruleset(probe.runner, probe.run_dir))]


def plan_forwarding(probe: Probe) -> list[Step]:
    """Forwarding on, after keel's ruleset is in: the boot leaves it off
    (S02firewall's default-deny ruleset, no forwarding) until then. A plan
    that stops at the firewall never turns it on."""
    if probe.forwarding():
        return []
    return [Step("firewall", "forwarding on (IPv4, IPv6), behind the ruleset",
                 (("sysctl", "-qw", "net.ipv4.ip_forward=1",
                   "net.ipv6.conf.all.forwarding=1"),))]


def plan_dnsmasq(model: RouterModel, probe: Probe) -> list[Step]:
    conf = dnsmasq.render_dnsmasq(model)
    pidfile = str(probe.run_dir / "dnsmasq.pid")
    running = probe.pid_alive(pidfile)
    if conf is None:
        if running:
            return [stop_daemon("dhcp-dns", "no LAN: stop dnsmasq", pidfile)]
        return []
    digest = _sha(conf)
    if running and probe.stamp("dnsmasq.sha") == digest:
        return []
    path = probe.run_dir / "dnsmasq.conf"
    steps = [stop_daemon("dhcp-dns", "stop the old dnsmasq", pidfile)] if running else []
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
            return [stop_daemon("iperf3", "stop the iperf3 server", pidfile)]
        return []
    if probe.pid_alive(pidfile):
        return []
    addr = str(ipaddress.ip_interface(t.address[0]).ip)
    return [Step("iperf3", f"iperf3 server on the tunnel address {addr} only",
                 (("iperf3", "-s", "-D", "-B", addr, "-I", pidfile),))]


def plan_governor(want: Tuning, probe: Probe) -> list[Step]:
    state = probe.cpu_tuning()
    if not state.has_cpufreq or all(f.governor == want.governor for f in state.freq.values()):
        return []
    return [Step("tuning", f"governor {want.governor} on every CPU",
                 action=lambda: cpu_tuning.set_governor(want.governor))]


def plan_latency_hold(want: Tuning, probe: Probe) -> list[Step]:
    pidfile = str(probe.run_dir / "pmqos.pid")
    holding = probe.pid_alive(pidfile)
    limit = str(want.max_cstate_latency_us)
    if not want.hold_latency:
        if not holding:
            return []
        return [stop_daemon("tuning", "release the CPU latency request", pidfile)]
    if not probe.pm_qos_available() or (holding and probe.stamp("pmqos") == limit):
        return []
    steps = []
    if holding:
        steps.append(stop_daemon("tuning", "release the old CPU latency request", pidfile))
    steps.append(Step("tuning", f"hold CPU wake-up latency <= {limit} us (deep C-states off)",
                      (("start-stop-daemon", "-S", "-b", "-m", "-p", pidfile,
                        "-x", sys.executable, "--", "-m", "keel.tuning.hold", limit),),
                      stamps=_stamp(probe.run_dir, "pmqos", limit)))
    return steps


def adaptive_argv(model: RouterModel) -> list[str] | None:
    """The adaptive CAKE daemon's command line for this model (None: off):
    the tunnel's peer probed and this router's tunnel address and device the
    probes leave from (keel.adaptive.target), the devices CAKE sits on, each
    shaped direction's bounds."""
    wg = model.wireguard
    wans = [w for w in model.wans if w.shaping.adaptive]
    if not wans or wg is None:
        return None
    peer, source = target.probed_peer(wg.peer), target.probe_source(wg.address)
    if peer is None or source is None:
        return None
    wan = wans[0]
    dev, _ = cake.shaped_device(wan, wg.interface)
    argv = [sys.executable, "-m", "keel.adaptive.daemon", "--peer", peer, "--egress", dev,
            "--ingress", cake.ifb_name(dev), "--tunnel", wg.interface, "--source", source]
    for flag, way in (("--up", "upload"), ("--down", "download")):
        low, base, high = wan.shaping.bounds(way)
        if base > 0:
            argv += [flag, f"{low}:{base}:{high}"]
    return argv


def plan_adaptive(model: RouterModel, probe: Probe) -> list[Step]:
    """Adaptive CAKE's daemon runs with this model's arguments, or not at all."""
    pidfile = str(probe.run_dir / "adapt.pid")
    running = probe.pid_alive(pidfile)
    argv = adaptive_argv(model)
    if argv is None:
        return [stop_daemon("shaping", "adaptive CAKE off", pidfile)] if running else []
    digest = _sha(repr(argv[1:]))
    if running and probe.stamp("adapt") == digest:
        return []
    steps = [stop_daemon("shaping", "adaptive CAKE: restarted", pidfile)] if running else []
    steps.append(Step("shaping", f"adaptive CAKE: rates follow the line (probing {argv[4]})",
                      (("start-stop-daemon", "-S", "-b", "-m", "-p", pidfile,
                        "-x", sys.executable, "--", *argv[1:]),),
                      stamps=_stamp(probe.run_dir, "adapt", digest)))
    return steps


def plan_rps(model: RouterModel, probe: Probe) -> list[Step]:
    ncpus = probe.cpu_count()
    if not model.tuning.rps or ncpus < 2:
        return []
    mask = cpu_tuning.cpu_mask(ncpus)
    steps = []
    for ifname in [w.interface for w in model.wans] + [lan.interface for lan in model.lans]:
        have = probe.rps_mask(ifname)
        if have is None or have == int(mask, 16):
            continue
        steps.append(Step("tuning", f"RPS/XPS on {ifname} over CPUs 0-{ncpus - 1} (mask {mask})",
                          action=lambda i=ifname: cpu_tuning.set_rps_xps(i, ncpus)))
    return steps


def plan_tuning(model: RouterModel, probe: Probe) -> list[Step]:
    return [*plan_governor(model.tuning, probe), *plan_latency_hold(model.tuning, probe),
            *plan_rps(model, probe)]


# --- access ---------------------------------------------------------------------
def plan_access(model: RouterModel, probe: Probe) -> list[Step]:
    """dropbear's authorized_keys: the config's keys and those added from the
    console, each once."""
    want = ssh_keys.authorized_keys_text(ssh_keys.merged(
        model.access.ssh_keys, ssh_keys.KeyStore(probe.access_dir).lines()))
    path = probe.authorized_keys
    try:
        have = path.read_text()
    except OSError:
        have = None
    if have == want or (have is None and not want):
        return []
    count = want.count("\n")
    return [Step("access", f"{count} SSH key(s) may log in as root",
                 files=((str(path), want, 0o600),))]


# --- the whole plan -------------------------------------------------------------
def plan(model: RouterModel, probe: Probe, private_key: Callable[[], str]) -> list[Step]:
    return [
        *plan_hostname(model, probe),
        *ipv6_plan.plan_sysctls(model, probe),
        *plan_stale_dhcp_clients(model, probe),
        *plan_interfaces(model, probe),
        *plan_dhcp_client(model, probe),
        *ipv6_plan.plan_dhcpcd(model, probe),
        *plan_tunnel(model, probe, private_key),
        *ipv6_plan.plan_lan6_rules(model, probe),
        *ipv6_plan.plan_ndp_proxy(model, probe),
        *plan_shaping(model, probe),
        *plan_firewall(model, probe),
        *plan_adaptive(model, probe),
        *plan_forwarding(probe),
        *plan_dnsmasq(model, probe),
        *plan_iperf3(model, probe),
        *plan_metrics(model, probe),
        *plan_fleet_agent(model, probe),
        *plan_fleet_watch(model, probe),
        *plan_tuning(model, probe),
        *plan_access(model, probe),
    ]


def check_ruleset(model: RouterModel, runner: Runner, run_dir: Path = RUN_DIR) -> None:
    """`nft -c` on the ruleset before anything is applied (raises CommandError)."""
    path = run_dir / "ruleset.check.nft"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(nft.render_ruleset(model))
    runner.run(["nft", "-c", "-f", str(path)])
