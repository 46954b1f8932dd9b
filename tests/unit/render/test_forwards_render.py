"""Port forwards as rendered: the hub's DNAT, the edge's acceptance, marks and
the routing rule that send the replies back through the tunnel, hairpin
NAT; and both rulesets loaded by a real nftables in a network namespace."""

from __future__ import annotations

import json
import textwrap
from dataclasses import replace

from keel.model import Forward, Lan, Peer, RouterModel, Wan, WireGuard
from keel.render import nft, wireguard
from tests.unit.netns import needs_nft, run_in_netns
from tests.unit.render.test_render import EDGE, PUB

WEB = Forward("web", "tcp", 8080, 8080, "192.168.77.50", 80, "outer", via="edge1")
GAME = Forward("game", "both", 27015, 27020, "192.168.77.60", None, "outer", via="edge1")

HUB = RouterModel(
    wans=(Wan("eth0"),),
    wireguard=WireGuard(address=("10.77.0.1/24",), peer=(
        Peer(PUB, ("10.77.0.2/32", "192.168.77.0/24"), name="edge1"),)),
    forwards=(WEB, GAME),
)
EDGE_FWD = replace(EDGE, forwards=(replace(WEB, role="inner"), replace(GAME, role="inner")))


def test_the_hub_dnats_its_public_ports_to_the_targets_and_lets_them_through():
    rules = nft.render_ruleset(HUB)
    assert ('fib daddr type local ip daddr != { 127.0.0.0/8, 10.77.0.1 } tcp dport 8080 '
            'counter name "fwd-web" dnat ip to 192.168.77.50:80') in rules
    # a range keeps its ports, on both protocols
    for proto in ("tcp", "udp"):
        assert (f'{proto} dport 27015-27020 counter name "fwd-game" '
                "dnat ip to 192.168.77.60") in rules
        assert f"ct status dnat ip daddr 192.168.77.60 {proto} dport 27015-27020 accept" in rules
    assert "ct status dnat ip daddr 192.168.77.50 tcp dport 80 accept" in rules
    assert "counter fwd-web {" in rules
    # the client's address is kept: no masquerade into the tunnel, but hairpin's
    assert 'oifname "wg0" ct status dnat ip daddr' not in rules
    assert 'iifname "wg0" oifname "wg0" meta nfproto ipv4 ct status dnat masquerade' in rules


def test_snat_true_masquerades_that_forward_into_the_tunnel():
    hub = replace(HUB, forwards=(replace(WEB, snat=True),))
    rules = nft.render_ruleset(hub)
    assert ('oifname "wg0" ct status dnat ip daddr 192.168.77.50 tcp dport 80 masquerade'
            in rules)


def test_the_edge_accepts_only_the_targets_from_the_tunnel_and_marks_them():
    rules = nft.render_ruleset(EDGE_FWD)
    mark = hex(wireguard.FORWARD_MARK)
    assert ('iifname "wg0" oifname { "eth1" } ip daddr 192.168.77.50 tcp dport 80 ct state new '
            f'counter name "fwd-web" ct mark set {mark} accept') in rules
    assert f'iifname {{ "eth1" }} ct mark {mark} meta mark set {mark}' in rules
    # nothing else from the tunnel into the LAN
    assert 'iifname "wg0" oifname { "eth1" } accept' not in rules
    assert "fib daddr type local" not in rules  # the edge opens nothing on its WAN
    # its own LAN reaching the hub's public address: sent to the target directly
    assert ('iifname { "eth1" } ip daddr 203.0.113.2 tcp dport 8080 '
            "dnat ip to 192.168.77.50:80") in rules
    assert 'iifname "eth1" oifname "eth1" meta nfproto ipv4 ct status dnat masquerade' in rules
    assert ('iifname { "eth1" } oifname { "eth1" } ct status dnat ip daddr 192.168.77.50 '
            "tcp dport 80 accept") in rules


def test_the_edge_takes_any_source_from_its_hub_and_routes_replies_back():
    conf = wireguard.render_syncconf(EDGE_FWD.wireguard, "KEY", EDGE_FWD.forwards)
    assert "AllowedIPs = 10.77.0.1/32, 172.31.77.0/24, 0.0.0.0/0" in conf
    assert "0.0.0.0/0" not in wireguard.render_syncconf(EDGE.wireguard, "KEY")
    table = str(wireguard.FORWARD_MARK)
    assert ["ip", "route", "replace", "default", "dev", "wg0", "table", table] in (
        wireguard.route_commands(EDGE_FWD.wireguard, EDGE_FWD.forwards))
    assert (wireguard.FORWARD_RULE_PRIORITY, "fwmark", hex(wireguard.FORWARD_MARK), "lookup",
            table) in wireguard.policy_rules(EDGE_FWD.wireguard, EDGE_FWD.forwards)
    # the routes themselves stay keel's: nothing more goes into the tunnel
    assert wireguard.route_commands(EDGE_FWD.wireguard, EDGE_FWD.forwards)[1:] == (
        wireguard.route_commands(EDGE.wireguard))


def test_an_ipv6_forward_alone_needs_no_mark_rule_or_ipv4_default_from_the_hub():
    web6 = Forward("web6", "tcp", 8443, 8443, "2001:db8:100:1::50", None, "inner", via="edge")
    edge6 = replace(EDGE, forwards=(web6,))
    assert "0.0.0.0/0" not in wireguard.render_syncconf(edge6.wireguard, "KEY", edge6.forwards)
    assert wireguard.policy_rules(edge6.wireguard, edge6.forwards) == (
        wireguard.policy_rules(EDGE.wireguard))

def test_a_hub_with_no_forwards_renders_as_before():
    bare = replace(HUB, forwards=())
    rules = nft.render_ruleset(bare)
    assert "dnat" not in rules and "counter" not in rules and "chain prerouting" not in rules


def test_a_local_forward_goes_to_the_own_lan():
    hub = replace(HUB, lans=(Lan("eth1", "192.168.50.1/24"),), forwards=(
        Forward("nas", "udp", 5000, 5000, "192.168.50.9", 5001, "local"),))
    rules = nft.render_ruleset(hub)
    assert "udp dport 5000 counter name \"fwd-nas\" dnat ip to 192.168.50.9:5001" in rules
    assert "ct status dnat ip daddr 192.168.50.9 udp dport 5001 accept" in rules


REAL = textwrap.dedent("""
    import json, subprocess, sys
    sys.path.insert(0, sys.argv[1])
    from pathlib import Path
    from keel.apply import engine
    from keel.render import nft
    from keel.system.commands import Runner
    from tests.unit.render.test_forwards_render import HUB, EDGE_FWD
    run_dir, runner, out = Path(sys.argv[2]), Runner(), {}
    for dev in ("eth0", "eth1"):
        subprocess.run(["ip", "link", "add", dev, "type", "dummy"], check=False)
    for name, model in (("hub", HUB), ("edge", EDGE_FWD)):
        path = run_dir / f"{name}.nft"
        path.write_text(nft.render_ruleset(model))
        runner.run(["nft", "-f", str(path)])
        engine.record_live_ruleset(runner, run_dir)
        first = engine.Probe(runner, run_dir).nft_listing()
        out[name] = {"counters": runner.run(list(nft.LIST_COUNTERS)).stdout,
                     "stable": first == engine.Probe(runner, run_dir).nft_listing()}
    print(json.dumps(out))
""")


@needs_nft
def test_both_rulesets_load_on_a_real_nftables(tmp_path):
    out = run_in_netns(REAL, tmp_path)
    for name in ("hub", "edge"):
        assert out[name]["stable"]
        names = {c["counter"]["name"] for c in json.loads(out[name]["counters"])["nftables"]
                 if "counter" in c}
        assert names == {"fwd-web", "fwd-game"}, out[name]["counters"]
