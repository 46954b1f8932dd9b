"""Plan the IPv6 plumbing (keel.apply.engine.plan calls these): the WAN's
sysctls, dhcpcd for the WAN's delegated prefix, an edge's LAN /64 sent into
the tunnel by source, a hub's neighbour proxies on its WAN. Each compares
the model with what the Probe reads and plans only what differs; the
pieces they render are keel.render.dhcpcd, keel.render.ipv6 and
keel.render.wireguard."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from keel.apply.probe import Probe
from keel.apply.steps import Step, stop_daemon
from keel.model import RouterModel
from keel.render import dhcpcd, ipv6, wireguard

DHCPCD_PID = "dhcpcd.pid"
DHCPCD_STAMP = "dhcpcd.sha"


def plan_sysctls(model: RouterModel, probe: Probe) -> list[Step]:
    """accept_ra / autoconf / proxy_ndp on each WAN that is there. Planned
    before the links come up (the kernel solicits a router then) and before
    forwarding is turned on: turning net.ipv6.conf.all.forwarding on purges
    the default routes learned from RAs, except on interfaces with
    accept_ra 2."""
    links = probe.links()
    steps = []
    for wan, wanted in ipv6.wan_sysctls(model).items():
        if wan not in links:
            continue
        have = probe.sysctls(list(wanted))
        differ = {k: v for k, v in wanted.items() if have.get(k) != v}
        if not differ:
            continue
        auto = wanted.get(f"net.ipv6.conf.{wan}.accept_ra") == "2"
        what = [("router advertisements taken with forwarding on, SLAAC" if auto
                 else "no router advertisements (ipv6 off)")]
        if wanted.get(f"net.ipv6.conf.{wan}.proxy_ndp") == "1":
            what.append("answers neighbour solicitations for the edges (NDP proxy)")
        steps.append(Step("ipv6", f"{wan}: " + "; ".join(what),
                          (("sysctl", "-qw", *(f"{k}={v}" for k, v in differ.items())),)))
    return steps


def _duid_action(path: Path, duid: str):
    def write() -> list[str]:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_name(path.name + ".tmp")
            tmp.write_text(duid + "\n")
            os.replace(tmp, path)
        except OSError as err:
            return [f"cannot keep the DUID in {path} ({err.strerror}): the provider may "
                    "delegate another prefix after a reboot"]
        return [f"a new DUID, kept in {path}"]
    return write


def plan_dhcpcd(model: RouterModel, probe: Probe) -> list[Step]:
    """dhcpcd runs with this model's config (DHCPv6 prefix delegation on the
    WANs on auto), in the background: started, restarted on a change, or
    stopped when no WAN is on auto. The boot does not wait for a prefix."""
    pidfile = str(probe.run_dir / DHCPCD_PID)
    running = probe.pid_alive(pidfile)
    links = probe.links()
    wans = [w.interface for w in dhcpcd.auto_wans(model) if w.interface in links]
    if not wans:
        return [stop_daemon("dhcp-client", "no WAN on ipv6 = auto: stop dhcpcd",
                            pidfile)] if running else []
    program = probe.program("dhcpcd")
    if program is None:
        return [Step("dhcp-client", f"dhcpcd is not in this image: no IPv6 prefix is asked "
                                    f"for on {', '.join(wans)}")]
    kept = probe.dhcpcd_duid()
    duid = kept or dhcpcd.duid_uuid(os.urandom(16))
    conf = dhcpcd.render_dhcpcd(model, duid)
    assert conf is not None  # a WAN is on auto
    path = probe.run_dir / dhcpcd.CONFIG_NAME
    argv = dhcpcd.dhcpcd_argv(model, path, program)
    digest = hashlib.sha256(repr((conf, argv)).encode()).hexdigest()
    if running and kept is not None and probe.stamp(DHCPCD_STAMP) == digest:
        return []
    steps = [stop_daemon("dhcp-client", "stop the old dhcpcd", pidfile)] if running else []
    lans = [lan.interface for lan, _ in dhcpcd.delegated_lans(model)]
    gives = f", a /64 of it to {', '.join(lans)}" if lans else ""
    new = "" if kept else f"; a new DUID, kept in {probe.dhcpcd_dir / dhcpcd.DUID_FILE}"
    steps.append(Step(
        "dhcp-client",
        f"DHCPv6 prefix delegation on {', '.join(wans)}{gives} (dhcpcd, in the "
        f"background{new})",
        (("start-stop-daemon", "-S", "-b", "-m", "-p", pidfile, "-x", program, "--",
          *argv[1:]),),
        ((str(path), conf, 0o644),),
        ((str(probe.run_dir / "state" / DHCPCD_STAMP), digest + "\n"),),
        action=None if kept else _duid_action(probe.dhcpcd_dir / dhcpcd.DUID_FILE, duid)))
    return steps


def plan_lan6_rules(model: RouterModel, probe: Probe) -> list[Step]:
    """An edge's LAN /64s (lan.address6) into the tunnel by source: the
    rules of wireguard.lan6_rules, and only those at their priorities (an
    address6 changed or gone loses its rules); LAN6_TABLE's route is
    wireguard.route_commands', emptied here when no /64 is left."""
    prefixes = ipv6.lan_tunnel_prefixes(model)
    wanted = wireguard.lan6_rules(prefixes)
    ours = (wireguard.LAN6_MAIN_PRIORITY, wireguard.LAN6_RULE_PRIORITY)
    have = [r for r in probe.rules6() if r[0] in ours]
    want = {(prio, src, table, "0" if "suppress_prefixlength" in rest else "")
            for prio, _from, src, _lookup, table, *rest in wanted}
    steps = []
    for prio, src, table, suppress in have:
        if (prio, src, table, suppress) not in want:
            steps.append(Step("routes", f"IPv6 rule {prio} from {src} removed",
                              (("ip", "-6", "rule", "del", "priority", prio, "from", src),)))
    present = set(have)
    for rule in wanted:
        prio, _from, src, _lookup, table, *rest = rule
        key = (prio, src, table, "0" if rest else "")
        if key not in present:
            steps.append(Step("routes", f"IPv6 from {src} into the tunnel (rule {prio})",
                              (("ip", "-6", "rule", "add", "priority", *rule),)))
    if not prefixes and probe.table_routes6(wireguard.LAN6_TABLE):
        steps.append(Step("routes", f"no LAN /64 through the tunnel: table "
                                    f"{wireguard.LAN6_TABLE} emptied",
                          (("ip", "-6", "route", "flush", "table",
                            str(wireguard.LAN6_TABLE)),)))
    return steps


def plan_ndp_proxy(model: RouterModel, probe: Probe) -> list[Step]:
    """A hub with ipv6.ndp_proxy answers on its WAN for its edges'
    addresses (keel.render.ipv6.ndp_proxy_addresses); keel owns the WAN's
    proxy entries: any other goes."""
    links = probe.links()
    wanted = ipv6.ndp_proxy_addresses(model)
    steps = []
    for wan in (w.interface for w in model.wans):
        if wan not in links:
            continue
        have = probe.ndp_proxies(wan)
        add = [a for a in wanted if a not in have]
        gone = sorted(have - set(wanted))
        cmds = ([("ip", "-6", "neigh", "add", "proxy", a, "dev", wan) for a in add]
                + [("ip", "-6", "neigh", "del", "proxy", a, "dev", wan) for a in gone])
        if cmds:
            what = (f"answers for {', '.join(wanted)} (NDP proxy)" if wanted
                    else "answers for no other address (no NDP proxy)")
            steps.append(Step("ipv6", f"{wan}: {what}", tuple(cmds)))
    return steps
