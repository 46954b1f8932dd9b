"""Anti-spoofing on the WAN (keel.render.nft's `spoofed` chain) and the
adaptive daemon's receive path, with real packets in network namespaces
(tests.unit.render.spoof_traffic): a host on the edge's WAN segment that
spoofs the hub's tunnel address (once enough to drive adaptive CAKE's
upload rate to its minimum in about 3 s) or a LAN's reaches nothing."""

from __future__ import annotations

import textwrap

import pytest

from keel.render import nft
from tests.unit.netns import needs_nft, run_in_netns
from tests.unit.render.spoof_traffic import SENDS, edge_model

SCRIPT = textwrap.dedent("""
    import json, sys
    sys.path.insert(0, sys.argv[1])
    from tests.unit.render import spoof_traffic
    print(json.dumps({call}))
""")


def test_the_tunnels_sources_are_its_networks_and_what_its_peers_send_from():
    from dataclasses import replace

    from keel.model import Ipv6

    model = edge_model("none")
    assert nft.tunnel_sources(model) == (["10.77.0.0/24"], ["fd77::/64"])
    # a hub: its peers' LANs and its routed prefix, merged; a default never
    hub = replace(model, wireguard=replace(model.wireguard, peer=(
        *model.wireguard.peer,
        replace(model.wireguard.peer[0], allowed_ips=("172.16.0.0/24", "172.16.1.0/24",
                                                      "0.0.0.0/0", "::/0")))),
        ipv6=Ipv6(routed_prefix="2001:db8:100::/56"))
    assert nft.tunnel_sources(hub) == (["10.77.0.0/24", "172.16.0.0/23"],
                                       ["2001:db8:100::/56", "fd77::/64"])
    rules = nft.render_ruleset(hub)
    assert "\t\tip saddr { 10.77.0.0/24, 172.16.0.0/23 } drop" in rules
    assert 'iifname != { "eth0" } return' in rules


def test_a_router_without_a_wan_has_no_spoofed_chain():
    from keel.model import RouterModel

    assert "chain spoofed" not in nft.render_ruleset(RouterModel(wans=()))


@needs_nft
@pytest.mark.parametrize("route", ["none", "all"])
def test_spoofed_sources_on_the_wan_are_dropped_and_the_internet_passes(route, tmp_path):
    out = run_in_netns(SCRIPT.replace("{call}", f"spoof_traffic.scenario({route!r}, "
                                                "sys.argv[2])"), tmp_path)
    # without keel's ruleset every one of them arrives: the spoof works
    assert out["before"] == {name: True for name, *_ in SENDS}
    assert out["after"] == {name: passes for name, _, _, _, passes in SENDS}


@needs_nft
def test_the_daemon_takes_answers_through_the_tunnel_to_its_own_probes_only(tmp_path):
    out = run_in_netns(SCRIPT.replace("{call}", "spoof_traffic.daemon_scenario(sys.argv[2])"),
                       tmp_path)
    assert out["reflector"] == 1  # the real answer, through the tunnel
    assert out["forged_on_wan"] == 0  # the right number and time, but from the WAN
    assert out["guessed_in_tunnel"] == 0 and out["refused_in_tunnel"] == 10
    assert out["bound"] == ["10.77.0.2"]
