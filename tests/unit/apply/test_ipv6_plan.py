"""The IPv6 plan (keel.apply.ipv6 and its parts in keel.apply.engine) on a
fake probe: the WAN's sysctls, dhcpcd, the LAN's static /64, an edge's /64
sent into the tunnel by source, a hub's routes and neighbour proxies. Each
planned once, and nothing planned again once in place."""

from __future__ import annotations

from pathlib import Path

from keel.apply import engine
from keel.apply import ipv6 as plan6
from keel.apply.steps import Step
from keel.model import Ipv6, Lan, Peer, RouterModel, Wan, WireGuard
from keel.render import dhcpcd, dnsmasq, ipv6, wireguard

KEY = "K" * 43 + "="
DUID = "00:04:" + ":".join(["5a"] * 16)

EDGE6 = RouterModel(
    wans=(Wan("eth0", ipv6="auto", ipv6_pd_length=56),),
    lans=(Lan("eth1", "192.168.77.1/24", address6="2001:db8:100:1::1/64",
              ipv6_from_wan=True),),
    wireguard=WireGuard(address=("10.77.0.2/24",), peer=(
        Peer(KEY, ("10.77.0.1/32", "::/0"), "203.0.113.2:51820", 25),)),
)
HUB6 = RouterModel(
    wans=(Wan("eth0", mode="static", address="203.0.113.2/24", gateway="203.0.113.1"),),
    wireguard=WireGuard(address=("10.77.0.1/24",), peer=(
        Peer(KEY, ("10.77.0.2/32", "2001:db8:100:1::/64", "2001:db8:100:2::7/128",
                   "2001:db8:ffff::/64")),)),
    ipv6=Ipv6(routed_prefix="2001:db8:100::/56", ndp_proxy=True),
)


class Probe6(engine.Probe):
    """A system given as plain values; the runner is never used."""

    def __init__(self, run_dir: Path, *, links=("eth0", "eth1", "wg0"), sysctls=None,
                 addresses=None, dynamic=None, rules6=(), table6=(), proxies=None,
                 running=(), stamps=None, duid: str | None = DUID,
                 program: str | None = "/usr/sbin/dhcpcd") -> None:
        super().__init__(runner=None, run_dir=run_dir)  # type: ignore[arg-type]
        self._links = {n: {"ifname": n, "flags": ["UP"], "mtu": 1500, "linkinfo": {}}
                       for n in links}
        self.values = dict(sysctls or {})
        self.addrs, self.dyn = addresses or {}, dynamic or {}
        self.r6, self.t6, self.proxies = list(rules6), list(table6), proxies or {}
        self.running, self.stamps = running, dict(stamps or {})
        self.duid, self.prog = duid, program
        self.dhcpcd_dir = run_dir / "data-dhcpcd"

    def sysctls(self, keys):
        return {k: self.values[k] for k in keys if k in self.values}

    def addresses(self, ifname):
        return set(self.addrs.get(ifname, ()))

    def dynamic_addresses(self, ifname):
        return set(self.dyn.get(ifname, ()))

    def rules6(self):
        return self.r6

    def table_routes6(self, table):
        return self.t6

    def ndp_proxies(self, ifname):
        return set(self.proxies.get(ifname, ()))

    def pid_alive(self, pidfile):
        return any(pidfile.endswith(name) for name in self.running)

    def stamp(self, name):
        return self.stamps.get(name)

    def dhcpcd_duid(self):
        return self.duid

    def program(self, name):
        return self.prog


def whys(steps: list[Step]) -> list[str]:
    return [s.why for s in steps]


# --- sysctls ---------------------------------------------------------------------
def test_a_wan_on_auto_takes_ras_with_forwarding_on_and_slaac(tmp_path):
    (step,) = plan6.plan_sysctls(EDGE6, Probe6(tmp_path))
    assert step.component == "ipv6"
    assert step.commands == (("sysctl", "-qw", "net.ipv6.conf.eth0.accept_ra=2",
                              "net.ipv6.conf.eth0.autoconf=1",
                              "net.ipv6.conf.eth0.proxy_ndp=0"),)
    held = ipv6.wan_sysctls(EDGE6)["eth0"]
    assert plan6.plan_sysctls(EDGE6, Probe6(tmp_path, sysctls=held)) == []
    # only what differs is written
    (step,) = plan6.plan_sysctls(EDGE6, Probe6(tmp_path, sysctls={**held, "net.ipv6.conf."
                                                                  "eth0.accept_ra": "1"}))
    assert step.commands == (("sysctl", "-qw", "net.ipv6.conf.eth0.accept_ra=2"),)


def test_a_wan_with_ipv6_off_takes_no_ra_and_a_missing_wan_nothing(tmp_path):
    off = RouterModel(wans=(Wan("eth0"),))
    (step,) = plan6.plan_sysctls(off, Probe6(tmp_path))
    assert step.why == "eth0: no router advertisements (ipv6 off)"
    assert step.commands[0][2:] == ("net.ipv6.conf.eth0.accept_ra=0",
                                    "net.ipv6.conf.eth0.proxy_ndp=0")
    assert plan6.plan_sysctls(off, Probe6(tmp_path, links=("eth1",))) == []


def test_a_hub_with_ndp_proxy_answers_on_its_wan(tmp_path):
    (step,) = plan6.plan_sysctls(HUB6, Probe6(tmp_path))
    assert "net.ipv6.conf.eth0.proxy_ndp=1" in step.commands[0]
    assert "NDP proxy" in step.why


# --- the LAN's static /64 --------------------------------------------------------
def test_the_lans_static_64_is_put_on_it_and_dhcpcds_64_is_left_alone(tmp_path):
    probe = Probe6(tmp_path, addresses={"eth1": {"192.168.77.1/24", "2001:db8:1200::1/64",
                                                 "2001:db8:99::1/64"}},
                   dynamic={"eth1": {"2001:db8:1200::1/64"}})
    (step,) = engine.plan_interfaces(EDGE6, probe)
    assert ("ip", "addr", "replace", "2001:db8:100:1::1/64", "dev", "eth1") in step.commands
    # an old static /64 goes; the delegated one (a lifetime: dhcpcd's) stays
    assert ("ip", "addr", "del", "2001:db8:99::1/64", "dev", "eth1") in step.commands
    assert not any("2001:db8:1200::1/64" in c for c in step.commands)
    done = Probe6(tmp_path, addresses={"eth1": {"192.168.77.1/24", "2001:db8:100:1::1/64",
                                                "2001:db8:1200::1/64"}},
                  dynamic={"eth1": {"2001:db8:1200::1/64"}})
    assert engine.plan_interfaces(EDGE6, done) == []


def test_slaac_addresses_of_a_static_wan_are_kept(tmp_path):
    wan = RouterModel(wans=(Wan("eth0", mode="static", address="203.0.113.2/24",
                                ipv6="auto"),))
    probe = Probe6(tmp_path, addresses={"eth0": {"203.0.113.2/24", "2001:db8:5::a/64"}},
                   dynamic={"eth0": {"2001:db8:5::a/64"}})
    assert engine.plan_interfaces(wan, probe) == []


# --- dhcpcd ----------------------------------------------------------------------
def test_dhcpcd_starts_in_the_background_with_keels_config(tmp_path):
    (step,) = plan6.plan_dhcpcd(EDGE6, Probe6(tmp_path))
    assert step.component == "dhcp-client"
    assert step.why == ("DHCPv6 prefix delegation on eth0, a /64 of it to eth1 "
                        "(dhcpcd, in the background)")
    conf_path = str(tmp_path / "dhcpcd.conf")
    assert step.commands == (("start-stop-daemon", "-S", "-b", "-m", "-p",
                              str(tmp_path / "dhcpcd.pid"), "-x", "/usr/sbin/dhcpcd", "--",
                              "-B", "-f", conf_path, "eth0"),)
    ((path, text, mode),) = step.files
    assert (path, mode) == (conf_path, 0o644)
    assert text == dhcpcd.render_dhcpcd(EDGE6, DUID)
    assert step.action is None  # the DUID is kept already
    ((_stamp, digest),) = step.stamps
    # running with that config: nothing; a changed config: restarted
    running = Probe6(tmp_path, running=("dhcpcd.pid",),
                     stamps={"dhcpcd.sha": digest.strip()})
    assert plan6.plan_dhcpcd(EDGE6, running) == []
    changed = RouterModel(wans=(Wan("eth0", ipv6="auto", ipv6_pd_length=60),),
                          lans=EDGE6.lans)
    assert whys(plan6.plan_dhcpcd(changed, running)) == [
        "stop the old dhcpcd", "DHCPv6 prefix delegation on eth0, a /64 of it to eth1 "
                               "(dhcpcd, in the background)"]


def test_dhcpcd_stops_when_no_wan_is_on_auto_and_says_when_it_is_missing(tmp_path):
    off = RouterModel(wans=(Wan("eth0"),), lans=EDGE6.lans)
    assert plan6.plan_dhcpcd(off, Probe6(tmp_path)) == []
    assert whys(plan6.plan_dhcpcd(off, Probe6(tmp_path, running=("dhcpcd.pid",)))) == [
        "no WAN on ipv6 = auto: stop dhcpcd"]
    (step,) = plan6.plan_dhcpcd(EDGE6, Probe6(tmp_path, program=None))
    assert step.why == "dhcpcd is not in this image: no IPv6 prefix is asked for on eth0"
    assert not step.commands
    assert plan6.plan_dhcpcd(EDGE6, Probe6(tmp_path, links=("eth1",))) == []


def test_the_first_dhcpcd_makes_a_duid_and_keeps_it(tmp_path):
    probe = Probe6(tmp_path, duid=None)
    (step,) = plan6.plan_dhcpcd(EDGE6, probe)
    assert step.action is not None
    assert step.why.endswith(f"; a new DUID, kept in {probe.dhcpcd_dir / 'duid'})")
    notes = step.action()
    kept = (probe.dhcpcd_dir / "duid").read_text().strip()
    assert notes == [f"a new DUID, kept in {probe.dhcpcd_dir / 'duid'}"]
    assert dhcpcd.parse_duid(kept).startswith("00:04:") and f"duid {kept}" in step.files[0][1]
    # read back by the real probe's reader
    reader = engine.Probe(runner=None, run_dir=tmp_path)  # type: ignore[arg-type]
    reader.dhcpcd_dir = probe.dhcpcd_dir
    assert reader.dhcpcd_duid() == kept
    (probe.dhcpcd_dir / "duid").write_text("junk\n")
    assert reader.dhcpcd_duid() is None


def test_a_duid_that_cannot_be_kept_is_a_note_not_a_failure(tmp_path):
    probe = Probe6(tmp_path, duid=None)
    blocker = tmp_path / "data-dhcpcd"
    blocker.write_text("a file where the directory should be")
    (step,) = plan6.plan_dhcpcd(EDGE6, probe)
    (note,) = step.action()
    assert note.startswith("cannot keep the DUID in") and "another prefix" in note


# --- an edge's static /64 through the tunnel ---------------------------------------
def test_an_edges_static_64_goes_into_the_tunnel_by_source(tmp_path):
    assert ipv6.lan_tunnel_prefixes(EDGE6) == ("2001:db8:100:1::/64",)
    steps = plan6.plan_lan6_rules(EDGE6, Probe6(tmp_path))
    assert [s.commands for s in steps] == [
        (("ip", "-6", "rule", "add", "priority", "31980", "from", "2001:db8:100:1::/64",
          "lookup", "main", "suppress_prefixlength", "0"),),
        (("ip", "-6", "rule", "add", "priority", "31981", "from", "2001:db8:100:1::/64",
          "lookup", "51823"),)]
    present = [("31980", "2001:db8:100:1::/64", "main", "0"),
               ("31981", "2001:db8:100:1::/64", "51823", ""),
               ("32766", "all", "main", "")]
    assert plan6.plan_lan6_rules(EDGE6, Probe6(tmp_path, rules6=present,
                                               table6=["default"])) == []
    # the table's default route through the tunnel, with the other routes
    cmds = wireguard.route_commands(EDGE6.wireguard, (), ipv6.lan_tunnel_prefixes(EDGE6))
    assert ["ip", "-6", "route", "replace", "default", "dev", "wg0", "table", "51823"] in cmds
    # and the hub's peer takes any IPv6 address
    conf = wireguard.render_syncconf(EDGE6.wireguard, "S", (), ("2001:db8:100:1::/64",))
    assert "AllowedIPs = 10.77.0.1/32, ::/0" in conf
    bare = WireGuard(peer=(Peer(KEY, ("10.77.0.1/32",), "203.0.113.2:51820"),))
    assert wireguard.allowed_ips(bare, bare.peer[0], (), ("2001:db8:100:1::/64",)) == (
        "10.77.0.1/32", "::/0")
    assert wireguard.allowed_ips(bare, bare.peer[0]) == ("10.77.0.1/32",)


def test_a_changed_or_removed_static_64_loses_its_rules_and_table(tmp_path):
    old = [("31980", "2001:db8:99:1::/64", "main", "0"),
           ("31981", "2001:db8:99:1::/64", "51823", "")]
    steps = plan6.plan_lan6_rules(EDGE6, Probe6(tmp_path, rules6=old, table6=["default"]))
    assert [s.commands[0][:7] for s in steps[:2]] == [
        ("ip", "-6", "rule", "del", "priority", "31980", "from"),
        ("ip", "-6", "rule", "del", "priority", "31981", "from")]
    assert len(steps) == 4
    gone = RouterModel(wans=EDGE6.wans, wireguard=EDGE6.wireguard)
    steps = plan6.plan_lan6_rules(gone, Probe6(tmp_path, rules6=old, table6=["default"]))
    assert steps[-1].commands == (("ip", "-6", "route", "flush", "table", "51823"),)
    assert len(steps) == 3
    assert plan6.plan_lan6_rules(gone, Probe6(tmp_path)) == []


def test_a_hubs_lan_is_not_sent_into_the_tunnel():
    hub_lan = RouterModel(wans=HUB6.wans, wireguard=HUB6.wireguard, ipv6=HUB6.ipv6,
                          lans=(Lan("eth1", "10.9.0.1/24",
                                    address6="2001:db8:100:ff::1/64"),))
    assert ipv6.lan_tunnel_prefixes(hub_lan) == ()


# --- the hub ---------------------------------------------------------------------
def test_the_hub_routes_its_peers_prefixes_of_the_routed_prefix(tmp_path):
    peers6 = ipv6.routed_peer_prefixes(HUB6.wireguard, HUB6.ipv6.routed_prefix)
    assert peers6 == ("2001:db8:100:1::/64", "2001:db8:100:2::7/128")  # not ffff: outside
    cmds = wireguard.route_commands(HUB6.wireguard, (), (), peers6)
    assert cmds == [["ip", "-6", "route", "replace", "2001:db8:100:1::/64", "dev", "wg0"],
                    ["ip", "-6", "route", "replace", "2001:db8:100:2::7/128", "dev", "wg0"]]
    assert ipv6.routed_peer_prefixes(HUB6.wireguard, None) == ()

    class Tunnel(Probe6):
        def routes(self, ifname):
            return {"2001:db8:100:1::/64", "2001:db8:100:9::/64"}

        def rules(self):
            return ""

    probe = Tunnel(tmp_path, addresses={"wg0": {"10.77.0.1/24"}})
    probe._links["wg0"]["mtu"] = 1420
    (routes,) = [s for s in engine.plan_tunnel(HUB6, probe, lambda: "P" * 43 + "=")
                 if s.component == "routes"]
    # the peer's /64 stays routed, a /64 no peer has any more goes
    assert ("ip", "-6", "route", "del", "2001:db8:100:9::/64", "dev", "wg0") in routes.commands
    assert not any(c[:4] == ("ip", "-6", "route", "del") and "2001:db8:100:1::/64" in c
                   for c in routes.commands)


def test_the_hub_proxies_its_edges_addresses_on_the_wan(tmp_path):
    assert ipv6.ndp_proxy_addresses(HUB6) == ("2001:db8:100:1::1", "2001:db8:100:2::7")
    (step,) = plan6.plan_ndp_proxy(HUB6, Probe6(tmp_path, proxies={"eth0": {"2001:db8::9"}}))
    assert step.commands == (
        ("ip", "-6", "neigh", "add", "proxy", "2001:db8:100:1::1", "dev", "eth0"),
        ("ip", "-6", "neigh", "add", "proxy", "2001:db8:100:2::7", "dev", "eth0"),
        ("ip", "-6", "neigh", "del", "proxy", "2001:db8::9", "dev", "eth0"))
    done = Probe6(tmp_path, proxies={"eth0": {"2001:db8:100:1::1", "2001:db8:100:2::7"}})
    assert plan6.plan_ndp_proxy(HUB6, done) == []
    routed = RouterModel(wans=HUB6.wans, wireguard=HUB6.wireguard,
                         ipv6=Ipv6(routed_prefix="2001:db8:100::/56"))
    assert ipv6.ndp_proxy_addresses(routed) == ()
    (step,) = plan6.plan_ndp_proxy(routed, done)
    assert step.why == "eth0: answers for no other address (no NDP proxy)"
    assert all(c[3] == "del" for c in step.commands)


# --- dnsmasq's router advertisements ----------------------------------------------
def test_router_advertisements_only_on_lans_with_ipv6():
    plain = Lan("eth2", "10.0.2.1/24")
    delegated = Lan("eth3", "10.0.3.1/24", ipv6_from_wan=True)
    model = RouterModel(wans=EDGE6.wans, lans=(*EDGE6.lans, plain, delegated))
    lines = dnsmasq.render_dnsmasq(model).splitlines()
    for lan in ("eth1", "eth3"):
        assert f"dhcp-range=set:{lan},::,constructor:{lan},ra-stateless,64,1h" in lines
        assert f"dhcp-option=tag:{lan},option6:dns-server,[::]" in lines
    assert not any("constructor:eth2" in line for line in lines)
    assert "enable-ra" in lines and "quiet-ra" in lines
    # a WAN with ipv6 off: ipv6_from_wan alone announces nothing
    off = RouterModel(wans=(Wan("eth0"),), lans=(plain, delegated))
    text = dnsmasq.render_dnsmasq(off)
    assert "constructor" not in text and "enable-ra" not in text
