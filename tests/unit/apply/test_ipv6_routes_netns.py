"""An edge's static LAN /64 into the tunnel, and a hub's routes and
neighbour proxies, as keel applies them to a real kernel in a network
namespace (tests.unit.netns): keel's own plan (keel.apply.ipv6 and
plan_tunnel's routes), run by its own executor with the real Probe, then
planned again (nothing left to do), then the kernel asked where packets go
(`ip -6 route get`, with the LAN as the incoming interface for forwarded
ones). wg0 is a veth here (the host has no WireGuard): routes by device
are the same."""

from __future__ import annotations

from tests.unit.netns import needs_nft, run_in_netns

REAL = r"""
import json, subprocess, sys
sys.path.insert(0, sys.argv[1])
from keel.apply import engine, ipv6 as plan6
from keel.apply.execute import execute
from keel.model import Ipv6, Lan, Peer, RouterModel, Wan, WireGuard
from keel.render import ipv6, wireguard
from keel.system.commands import Runner

def sh(*argv):
    return subprocess.run(argv, capture_output=True, text=True, check=True).stdout

for a, b in (("lan0", "lanp"), ("wan0", "wanp"), ("wg0", "wgp")):
    sh("ip", "link", "add", a, "type", "veth", "peer", "name", b)
    sh("ip", "link", "set", a, "up"); sh("ip", "link", "set", b, "up")
sh("ip", "link", "set", "lo", "up")
sh("sysctl", "-qw", "net.ipv6.conf.all.forwarding=1")
for dev in ("lan0", "wan0", "wg0"):
    sh("sysctl", "-qw", f"net.ipv6.conf.{dev}.accept_dad=0")
sh("ip", "addr", "add", "2001:db8:5::2/64", "dev", "wan0", "nodad")
sh("ip", "-6", "route", "add", "default", "via", "2001:db8:5::1", "dev", "wan0")
key = "K" * 43 + "="
edge = RouterModel(
    wans=(Wan("wan0", ipv6="auto"),),
    lans=(Lan("lan0", "192.168.77.1/24", address6="2001:db8:100:1::1/64"),),
    wireguard=WireGuard(address=("10.77.0.2/24",), peer=(
        Peer(key, ("10.77.0.1/32", "::/0"), "203.0.113.2:51820", 25),)))
runner = Runner()
out = {}

def apply(model):
    probe = engine.Probe(runner, run_dir=__import__("pathlib").Path(sys.argv[2]) / "run")
    steps = [*engine.plan_interfaces(model, probe), *plan6.plan_lan6_rules(model, probe),
             *plan6.plan_ndp_proxy(model, probe)]
    t = model.wireguard
    lan6 = ipv6.lan_tunnel_prefixes(model)
    peers6 = ipv6.routed_peer_prefixes(t, model.ipv6.routed_prefix)
    routes = [c for c in wireguard.route_commands(t, (), lan6, peers6) if "-6" in c]
    execute(steps, runner, lambda line: None)
    for cmd in routes:
        runner.run(cmd)
    again = engine.Probe(runner, run_dir=probe.run_dir)
    left = [*engine.plan_interfaces(model, again), *plan6.plan_lan6_rules(model, again),
            *plan6.plan_ndp_proxy(model, again)]
    return [s.why for s in steps], [s.why for s in left]

def get(*args):
    return sh("ip", "-6", "-j", "route", "get", *args)

out["edge_steps"], out["edge_left"] = apply(edge)
out["rules"] = sh("ip", "-6", "rule", "show")
out["from_lan"] = json.loads(get("2001:db8:ffff::1", "from", "2001:db8:100:1::abc",
                                 "iif", "lan0"))[0]
out["to_lan"] = json.loads(get("2001:db8:100:1::abc", "from", "2001:db8:100:1::1"))[0]
out["router_own"] = json.loads(get("2001:db8:ffff::1"))[0]
out["other_source"] = json.loads(get("2001:db8:ffff::1", "from", "2001:db8:5::77",
                                     "iif", "lan0"))[0]
# the LAN's /64 changed: the old rules go, the new ones come
moved = RouterModel(wans=edge.wans, wireguard=edge.wireguard,
                    lans=(Lan("lan0", "192.168.77.1/24", address6="2001:db8:100:2::1/64"),))
out["moved_steps"], out["moved_left"] = apply(moved)
out["moved_rules"] = sh("ip", "-6", "rule", "show")
# no /64 any more: no rule, the table emptied
bare = RouterModel(wans=edge.wans, wireguard=edge.wireguard,
                   lans=(Lan("lan0", "192.168.77.1/24"),))
out["bare_steps"], out["bare_left"] = apply(bare)
out["bare_rules"] = sh("ip", "-6", "rule", "show")
out["bare_table"] = sh("ip", "-6", "route", "show", "table", str(wireguard.LAN6_TABLE))

# the hub: its peer's /64 and /128 of the routed prefix into the tunnel, and
# answered for on its WAN
hub = RouterModel(
    wans=(Wan("wan0", mode="static", address="203.0.113.2/24"),),
    wireguard=WireGuard(address=("10.77.0.1/24",), peer=(
        Peer(key, ("10.77.0.2/32", "2001:db8:100:1::/64", "2001:db8:100:2::7/128")),)),
    ipv6=Ipv6(routed_prefix="2001:db8:100::/56", ndp_proxy=True))
out["hub_steps"], out["hub_left"] = apply(hub)
out["hub_route"] = json.loads(get("2001:db8:100:1::abc"))[0]
out["hub_proxies"] = sh("ip", "-6", "neigh", "show", "proxy")
print(json.dumps(out))
"""


@needs_nft
def test_an_edges_64_goes_into_the_tunnel_and_a_hub_routes_and_answers_for_its_peers(
        tmp_path):
    out = run_in_netns(REAL, tmp_path)
    assert "IPv6 from 2001:db8:100:1::/64 into the tunnel (rule 31981)" in out["edge_steps"]
    assert out["edge_left"] == []
    assert "31980:\tfrom 2001:db8:100:1::/64 lookup main suppress_prefixlength 0" in out["rules"]
    assert "31981:\tfrom 2001:db8:100:1::/64 lookup 51823" in out["rules"]
    # forwarded from the LAN's /64: into the tunnel, whatever the WAN has
    assert out["from_lan"]["dev"] == "wg0"
    # the router's replies to the LAN stay on the LAN (the main table's
    # routes but its default come first); its own traffic and other
    # sources take the WAN
    assert out["to_lan"]["dev"] == "lan0"
    assert out["router_own"]["dev"] == "wan0"
    assert out["other_source"]["dev"] == "wan0"
    assert out["moved_left"] == []
    assert "2001:db8:100:1::/64" not in out["moved_rules"]
    assert "31981:\tfrom 2001:db8:100:2::/64 lookup 51823" in out["moved_rules"]
    assert out["bare_left"] == [] and "lookup 51823" not in out["bare_rules"]
    assert "suppress_prefixlength" not in out["bare_rules"] and out["bare_table"] == ""
    assert out["hub_left"] == []
    assert out["hub_route"]["dev"] == "wg0"
    assert "2001:db8:100:1::1 dev wan0 proxy" in out["hub_proxies"]
    assert "2001:db8:100:2::7 dev wan0 proxy" in out["hub_proxies"]
