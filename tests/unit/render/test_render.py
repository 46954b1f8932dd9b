"""Renderers and the apply plan: what keel would run for a model, and that a
system already in the desired state gets no step at all."""

from __future__ import annotations

import subprocess
from pathlib import Path

from keel.apply import engine
from keel.model import (
    Firewall,
    Lan,
    Peer,
    RouterModel,
    Selftest,
    Shaping,
    Tuning,
    Wan,
    WireGuard,
)
from keel.parse.tcqdisc import Qdisc, parse_qdiscs
from keel.render import cake, dnsmasq, ipv6, nft, wireguard
from keel.system.commands import Runner
from keel.system.cpu_sysfs import CpuTuning

PUB = "HlOu1tgN6jIPCqo/B9y+b7TT1bltyagEMGZGjSZNPVI="
SECRET = "mJ1JYpGGd2ghT2bsyeZmoTpOG3C/a1j4KZl41LPf5l8="

EDGE = RouterModel(
    wans=(Wan("eth0", shaping=Shaping(download_kbit=18000, upload_kbit=4500,
                                      overhead="docsis")),),
    lans=(Lan("eth1", "192.168.77.1/24", "192.168.77.100", "192.168.77.199"),),
    wireguard=WireGuard(address=("10.77.0.2/24",), peer=(
        Peer(PUB, ("10.77.0.1/32", "172.31.77.0/24"), "203.0.113.2:51820", 25),),
        route="prefixes", prefixes=("172.31.77.0/24",)),
    tuning=Tuning(hold_latency=False, rps=False),
)


def test_cake_both_directions():
    wan = EDGE.wans[0]
    (egress,) = cake.egress_commands(wan)
    assert egress[:7] == ["tc", "qdisc", "replace", "dev", "eth0", "root", "cake"]
    assert egress[7:9] == ["bandwidth", "4500kbit"] and "docsis" in egress
    assert "ingress" not in egress
    ingress = cake.ingress_commands(wan)
    assert ["ip", "link", "add", "ifb4eth0", "type", "ifb"] in ingress
    cake_ifb = next(c for c in ingress if c[:4] == ["tc", "qdisc", "replace", "dev"]
                    and c[4] == "ifb4eth0")
    assert "18000kbit" in cake_ifb and "ingress" in cake_ifb and "wash" in cake_ifb
    assert ingress[-1][-6:] == ["action", "mirred", "egress", "redirect", "dev", "ifb4eth0"]
    assert cake.ifb_name("enp0s31f6-long") == "ifb4enp0s31f6-l"


def test_ingress_shaping_on_the_tunnel_turns_its_gro_off_and_back_on():
    shaping = Shaping(download_kbit=10800, upload_kbit=3600, attach="tunnel")
    on = cake.ingress_commands(Wan("eth0", shaping=shaping), "wg0")
    assert on[-1] == ["ethtool", "-K", "wg0", "gro", "off"]
    assert on[0][:4] == ["ip", "link", "add", "ifb4wg0"]  # apply drops it when the IFB exists
    off = cake.ingress_commands(Wan("eth0", shaping=Shaping(attach="tunnel")), "wg0")
    assert off[-1] == ["ethtool", "-K", "wg0", "gro", "on"]
    # on the WAN itself GRO stays as it is
    wan = cake.ingress_commands(Wan("eth0", shaping=Shaping(download_kbit=10800)), "wg0")
    assert not any(c[0] == "ethtool" for c in wan)


def test_shaping_off_means_fq_codel_and_no_ifb():
    wan = Wan("eth0", shaping=Shaping())
    assert cake.egress_commands(wan) == [["tc", "qdisc", "replace", "dev", "eth0", "root",
                                          "fq_codel"]]
    assert ["ip", "link", "del", "ifb4eth0"] in cake.ingress_commands(wan)


def test_nft_default_deny_on_wan_with_the_wireguard_port_open():
    rules = nft.render_ruleset(EDGE)
    assert rules.startswith("#!/usr/sbin/nft -f")
    assert "flush ruleset" in rules and "table inet keel" in rules
    assert "type filter hook input priority filter; policy drop;" in rules
    assert 'iifname { "eth0" } udp dport 51820 accept' in rules
    assert "tcp dport 22" not in rules
    assert 'iifname { "eth1" } oifname { "eth0" } accept' in rules
    assert 'iifname { "eth1" } oifname "wg0" accept' in rules
    assert 'oifname { "eth0", "wg0" } meta nfproto ipv4 masquerade' in rules
    hub = RouterModel(wans=(Wan("eth0"),), wireguard=WireGuard(address=("10.77.0.1/24",)),
                      firewall=Firewall(ssh_on_wan=True, forward_tunnel_to_wan=True),
                      selftest=Selftest(iperf3_server=True))
    rules = nft.render_ruleset(hub)
    assert 'iifname { "eth0" } tcp dport 22 accept' in rules
    assert 'iifname "wg0" tcp dport 5201 accept' in rules
    assert 'iifname "wg0" oifname { "eth0" } accept' in rules


def test_the_pairing_port_has_a_place_of_its_own_in_every_ruleset():
    """A set with timeouts and one rule on the WAN: `keel pair` adds an
    element that expires by itself and deletes only that; a reload carries
    a waiting element over with what remains of its timeout."""
    rules = nft.render_ruleset(EDGE)
    assert "\tset pairing {\n\t\ttype inet_service\n\t\tflags timeout\n" in rules
    assert 'iifname { "eth0" } tcp dport @pairing accept' in rules
    assert "elements" not in rules and "tcp dport 51820" not in rules
    waiting = nft.render_ruleset(EDGE, [(51820, 412)])
    assert "\t\telements = { 51820 timeout 412s }\n" in waiting
    assert waiting.replace("\t\telements = { 51820 timeout 412s }\n", "") == rules
    assert nft.pairing_open(51820, 615) == [
        "nft", "flush set inet keel pairing; add element inet keel pairing "
               "{ 51820 timeout 615s }"]
    assert nft.pairing_close(51820) == ["nft", "delete", "element", "inet", "keel", "pairing",
                                        "{ 51820 }"]
    assert nft.render_ruleset(EDGE).splitlines()[2] == "flush ruleset"


def test_wireguard_conf_and_routes():
    conf = wireguard.render_syncconf(EDGE.wireguard, SECRET)
    assert f"PrivateKey = {SECRET}" in conf and "Endpoint = 203.0.113.2:51820" in conf
    assert "AllowedIPs = 10.77.0.1/32, 172.31.77.0/24" in conf
    assert wireguard.route_commands(EDGE.wireguard) == [
        ["ip", "route", "replace", "172.31.77.0/24", "dev", "wg0"]]
    assert wireguard.policy_rules(EDGE.wireguard) == []


def test_dnsmasq_serves_the_lan():
    conf = dnsmasq.render_dnsmasq(EDGE)
    assert "interface=eth1" in conf
    assert "dhcp-range=set:eth1,192.168.77.100,192.168.77.199,255.255.255.0,12h" in conf
    assert dnsmasq.render_dnsmasq(RouterModel(wans=(Wan("eth0"),))) is None


def tc_show(dev: str, *qdiscs: dict) -> list[Qdisc]:
    """What `tc -s -j qdisc show dev DEV` gives, parsed."""
    return parse_qdiscs(list(qdiscs), dev)


LISTING = """table inet keel {
\tset pairing {
\t\ttype inet_service
\t\tflags timeout
\t}

\tchain input {
\t\ttype filter hook input priority filter; policy drop;
\t\tiifname "eth0" tcp dport @pairing accept
\t}
}
"""


class ListingRunner(Runner):
    """nft lists `listing` (settable: drift); anything else says nothing."""

    def __init__(self, listing: str = LISTING) -> None:
        super().__init__()
        self.listing = listing

    def run(self, argv, **kwargs):
        self.ran.append(list(argv))
        out = self.listing if tuple(argv) == nft.LIST_STATELESS else ""
        return subprocess.CompletedProcess(list(argv), 0, out, "")


class SteadyProbe(engine.Probe):
    """A system where everything of EDGE is already in place."""

    def __init__(self, run_dir: Path) -> None:
        super().__init__(runner=ListingRunner(), run_dir=run_dir)

    def links(self):
        return {name: {"ifname": name, "flags": ["UP"], "mtu": 1420 if name == "wg0" else 1500,
                       "linkinfo": {}} for name in ("eth0", "eth1", "wg0", "ifb4eth0")}

    def addresses(self, ifname):
        return {"eth1": {"192.168.77.1/24"}, "wg0": {"10.77.0.2/24"}}.get(ifname, set())

    def qdiscs(self, ifname):
        if ifname == "wg0":  # CAKE sits on the WAN: the tunnel keeps its default
            return tc_show(ifname, {"kind": "noqueue", "root": True})
        rate = {"eth0": 4500, "ifb4eth0": 18000}[ifname]
        return tc_show(ifname, {"kind": "cake", "root": True,
                                "options": {"bandwidth": rate * 125, "diffserv": "besteffort"}})

    def has_ingress(self, ifname):
        return ifname == "eth0"

    def rules(self):
        return ""

    def routes(self, ifname):
        return set(EDGE.wireguard.prefixes) if ifname == "wg0" else set()

    def default_gateway(self, version=4):
        return None

    def pid_alive(self, pidfile):
        return "dnsmasq" in pidfile or "udhcpc" in pidfile

    def forwarding(self):
        return True

    def sysctls(self, keys):
        held = {k: v for wan in ipv6.wan_sysctls(EDGE).values() for k, v in wan.items()}
        return {k: held[k] for k in keys if k in held}

    def cpu_tuning(self):
        return CpuTuning({}, "none", (), None)

    def hostname(self):
        return EDGE.system.hostname


def test_a_system_in_the_desired_state_gets_no_step(tmp_path):
    probe = SteadyProbe(tmp_path)
    first = engine.plan(EDGE, probe, lambda: SECRET)
    # nothing stamped yet: keel re-asserts what it cannot prove it made
    assert {s.component for s in first} >= {"firewall", "wireguard"}
    for step in first:
        if step.component == "firewall" and step.action is not None:
            step.action()  # notes the ruleset as nft lists it back
        for path, value in step.stamps:
            Path(path).parent.mkdir(parents=True, exist_ok=True)
            Path(path).write_text(value)
    assert engine.plan(EDGE, probe, lambda: SECRET) == []


def test_the_host_name_in_the_config_is_set(tmp_path):
    probe = SteadyProbe(tmp_path)
    probe.hostname = lambda: "localhost"  # type: ignore[method-assign]
    (step,) = [s for s in engine.plan(EDGE, probe, lambda: SECRET) if s.component == "system"]
    assert step.commands == (("hostname", EDGE.system.hostname),)
    assert EDGE.system.hostname != "localhost"


def test_plan_describes_steps_without_secrets(tmp_path):
    lines = [line for s in engine.plan(EDGE, SteadyProbe(tmp_path), lambda: SECRET)
             for line in s.describe()]
    assert lines and not any(SECRET in line for line in lines)


class IngressCakeGoneProbe(SteadyProbe):
    """The IFB and wg0's ingress redirect are there, the IFB's CAKE is not
    (what `selftest bufferbloat --compare` leaves while it bypasses CAKE)."""

    def links(self):
        return {name: {"ifname": name, "flags": ["UP"], "mtu": 1500, "linkinfo": {}}
                for name in ("eth0", "wg0", "ifb4wg0")}

    def qdiscs(self, ifname):
        if ifname == "wg0":
            return tc_show(ifname, {"kind": "cake", "root": True, "options": {
                "bandwidth": 3600 * 125, "diffserv": "besteffort"}})
        return tc_show(ifname, {"kind": "fq_codel", "root": True, "options": {}})

    def has_ingress(self, ifname):
        return ifname == "wg0"


def test_ingress_cake_comes_back_without_replacing_the_matchall_filter(tmp_path):
    model = RouterModel(
        wans=(Wan("eth0", shaping=Shaping(download_kbit=10800, upload_kbit=3600,
                                          attach="tunnel")),),
        wireguard=WireGuard(address=("10.77.0.2/24",)))
    steps = engine.plan_shaping(model, IngressCakeGoneProbe(tmp_path))
    (ingress,) = [s for s in steps if "ingress" in s.why]
    cmds = [list(c) for c in ingress.commands]
    assert cmds[0] == ["tc", "qdisc", "del", "dev", "wg0", "handle", "ffff:", "ingress"]
    assert ["ip", "link", "add", "ifb4wg0", "type", "ifb"] not in cmds  # it exists
    filters = [i for i, c in enumerate(cmds) if c[:2] == ["tc", "filter"]]
    qdisc_add = cmds.index(["tc", "qdisc", "replace", "dev", "wg0", "handle", "ffff:", "ingress"])
    assert filters and filters[0] > qdisc_add


# --- the static WAN's default route -------------------------------------------------
def test_a_vps_style_wan_gets_an_onlink_default_route():
    from keel.render.wan_route import default_route_command

    vps = Wan("eth0", mode="static", address="203.0.113.2/32", gateway="203.0.113.1")
    assert default_route_command(vps) == ["ip", "route", "replace", "default", "via",
                                          "203.0.113.1", "dev", "eth0", "onlink"]
    lan_style = Wan("eth0", mode="static", address="203.0.113.2/24", gateway="203.0.113.1")
    assert default_route_command(lan_style)[-1] == "eth0"
    v6 = Wan("eth0", mode="static", address="2001:db8::2/128", gateway="2001:db8::1")
    assert default_route_command(v6) == ["ip", "-6", "route", "replace", "default", "via",
                                         "2001:db8::1", "dev", "eth0", "onlink"]
    link_local = Wan("eth0", mode="static", address="2001:db8::2/64", gateway="fe80::1")
    assert default_route_command(link_local)[-1] == "eth0"
    assert default_route_command(Wan("eth0")) is None


class RecordedJson:
    """A runner that answers `ip -j ... route show default` as iproute2 does
    for an on-link route, and records what it was asked."""

    def __init__(self, routes: dict[str, str]) -> None:
        self.routes = routes
        self.ran: list[list[str]] = []

    def run(self, argv, **_):
        import subprocess

        self.ran.append(list(argv))
        family = "6" if "-6" in argv else "4"
        out = self.routes.get(family, "[]") if argv[-2:] == ["show", "default"] else "[]"
        return subprocess.CompletedProcess(argv, 0, out, "")


def test_the_onlink_default_route_is_applied_once(tmp_path):
    model = RouterModel(wans=(Wan("eth0", mode="static", address="203.0.113.2/32",
                                  gateway="203.0.113.1"),))

    class Links(engine.Probe):
        def links(self):
            return {"eth0": {"ifname": "eth0", "flags": ["UP"]}}

        def addresses(self, ifname):
            return {"203.0.113.2/32"}

    missing = Links(RecordedJson({}), tmp_path)  # type: ignore[arg-type]
    (step,) = engine.plan_interfaces(model, missing)
    assert step.commands == (("ip", "route", "replace", "default", "via", "203.0.113.1",
                              "dev", "eth0", "onlink"),)
    onlink = ('[{"dst":"default","gateway":"203.0.113.1","dev":"eth0","flags":["onlink"]}]')
    present = Links(RecordedJson({"4": onlink}), tmp_path)  # type: ignore[arg-type]
    assert engine.plan_interfaces(model, present) == []


def test_an_ipv6_default_route_is_compared_with_the_ipv6_table(tmp_path):
    model = RouterModel(wans=(Wan("eth0", mode="static", address="2001:db8::2/64",
                                  gateway="2001:db8::1"),))
    runner = RecordedJson({"6": '[{"dst":"default","gateway":"2001:db8::1","dev":"eth0"}]'})

    class Links(engine.Probe):
        def links(self):
            return {"eth0": {"ifname": "eth0", "flags": ["UP"]}}

        def addresses(self, ifname):
            return {"2001:db8::2/64"}

    assert engine.plan_interfaces(model, Links(runner, tmp_path)) == []  # type: ignore[arg-type]
    assert ["ip", "-j", "-6", "route", "show", "default"] in runner.ran


def test_every_overhead_preset_of_the_schema_renders():
    from keel.config.schema import OVERHEAD_PRESETS

    for name, nbytes in OVERHEAD_PRESETS.items():
        words = cake.overhead_options(name)
        assert words in ([], ["docsis"], ["overhead", str(nbytes)])
        assert cake.overhead_bytes(name) == nbytes
    assert cake.overhead_options(42) == ["overhead", "42"]
    assert cake.overhead_options("none") == [] and cake.overhead_options("docsis") == ["docsis"]
