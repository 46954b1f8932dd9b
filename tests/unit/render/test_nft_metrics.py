"""The Prometheus endpoint's port in the ruleset (keel.render.nft): closed
everywhere but the LAN while [metrics] is off; opened to the tunnel when it
is on, and on the WAN only with on_wan. Then with real packets through a
real nftables, in network namespaces (tests.unit.render.nft_traffic)."""

from __future__ import annotations

import textwrap
from dataclasses import replace

import pytest

from keel.model import Metrics, RouterModel, Wan
from keel.render import nft
from tests.unit.netns import needs_nft, run_in_netns
from tests.unit.render.test_nft_ipv6 import EDGE6, HUB6, _chain
from tests.unit.render.test_render import EDGE

ON = Metrics(enabled=True)
WAN_RULE = 'iifname { "eth0" } tcp dport 9586 accept'
TUNNEL_RULE = 'iifname "wg0" tcp dport 9586 accept'


def metrics_lines(rules: str, port: int = 9586) -> list[str]:
    return [line.strip() for line in rules.splitlines() if f"dport {port} " in line]


@pytest.mark.parametrize("model", [EDGE, EDGE6, HUB6], ids=["edge", "edge6", "hub6"])
def test_off_the_ruleset_is_what_it_was(model):
    """Off (the default): nothing of the port anywhere, the text unchanged
    by the metrics' own fields."""
    assert metrics_lines(nft.render_ruleset(model)) == []
    off = replace(model, metrics=Metrics(enabled=False, port=9100, on_wan=True))
    assert nft.render_ruleset(off) == nft.render_ruleset(model)


@pytest.mark.parametrize("model", [EDGE, EDGE6, HUB6], ids=["edge", "edge6", "hub6"])
def test_on_it_is_open_to_the_tunnel_and_not_the_wan(model):
    rules = nft.render_ruleset(replace(model, metrics=ON))
    assert metrics_lines(rules) == [TUNNEL_RULE]
    chain = _chain(rules, "input")
    # after conntrack's verdicts, like every other accept of the input chain
    assert chain.index(TUNNEL_RULE) > chain.index("ct state invalid drop")
    assert "policy drop;" in rules.split("\tchain input {\n", 1)[1].splitlines()[0]


def test_the_lan_reaches_it_by_the_lans_own_accept():
    """The LAN's input is accepted whole (its DNS, DHCP, SSH): the port
    needs no rule of its own there."""
    chain = _chain(nft.render_ruleset(replace(EDGE, metrics=ON)), "input")
    assert 'iifname { "eth1" } accept' in chain


def test_on_wan_opens_it_on_the_wan_too():
    rules = nft.render_ruleset(replace(EDGE, metrics=Metrics(enabled=True, on_wan=True)))
    assert metrics_lines(rules) == [TUNNEL_RULE, WAN_RULE]
    hub = nft.render_ruleset(replace(HUB6, metrics=Metrics(enabled=True, port=9100,
                                                           on_wan=True)))
    assert metrics_lines(hub, 9100) == ['iifname "wg0" tcp dport 9100 accept',
                                        'iifname { "eth0" } tcp dport 9100 accept']


def test_without_a_tunnel_only_the_lan_and_by_choice_the_wan():
    lan_only = replace(EDGE, wireguard=None, metrics=ON)
    assert metrics_lines(nft.render_ruleset(lan_only)) == []
    wan = replace(lan_only, metrics=Metrics(enabled=True, on_wan=True))
    assert metrics_lines(nft.render_ruleset(wan)) == [WAN_RULE]
    vps = RouterModel(wans=(Wan("eth0"),), metrics=Metrics(enabled=True, on_wan=True))
    assert metrics_lines(nft.render_ruleset(vps)) == [WAN_RULE]


def test_the_port_is_its_own_and_nothing_else_opens():
    """The metrics add one rule (two with on_wan) and change no other line."""
    base = nft.render_ruleset(EDGE6).splitlines()
    for metrics, added in ((ON, [TUNNEL_RULE]),
                           (Metrics(enabled=True, on_wan=True), [TUNNEL_RULE, WAN_RULE])):
        lines = nft.render_ruleset(replace(EDGE6, metrics=metrics)).splitlines()
        assert [line.strip() for line in lines if line not in base] == added
        assert [line for line in lines if line.strip() not in added] == base


# --- on a real nftables ------------------------------------------------------------
SCRIPT = textwrap.dedent("""
    import json, sys
    sys.path.insert(0, sys.argv[1])
    from dataclasses import replace
    from pathlib import Path
    from keel.model import Metrics
    from keel.render import nft
    from keel.system.commands import Runner
    from tests.unit.render import nft_traffic as t
    from tests.unit.render.test_nft_ipv6 import HUB6

    runner, run_dir, out = Runner(), Path(sys.argv[2]), {}
    router, hosts = t.Here(), []
    try:
        for _ in range(2):
            hosts.append(t.Host())
        inside, net = hosts
        t._setup("hub", router, inside, net)
        for name, metrics in (("off", Metrics()), ("on", Metrics(enabled=True)),
                              ("on_wan", Metrics(enabled=True, on_wan=True))):
            path = run_dir / f"{name}.nft"
            path.write_text(nft.render_ruleset(replace(HUB6, metrics=metrics)))
            runner.run(["nft", "-c", "-f", str(path)])
            runner.run(["nft", "-f", str(path)])
            serve = router.start("serve", "9586")
            got = {
                "tunnel4": inside.act("connect", "10.77.0.1", "9586")["ok"],
                "tunnel6": inside.act("connect", "2001:db8:100:1::1", "9586")["ok"],
                "wan4": net.act("connect", t.WAN4, "9586")["ok"],
                "wan6": net.act("connect", t.WAN6, "9586")["ok"],
            }
            got["peers"] = t.finish(serve)["peers"]
            out[name] = got
    finally:
        for host in hosts:
            host.stop()
    print(json.dumps(out))
""")


@needs_nft
def test_real_connections_to_the_port_from_the_tunnel_and_the_wan(tmp_path):
    """The hub (an edge's host behind its tunnel, a veth named wg0): a
    listener on the port is reached from the tunnel once [metrics] is on,
    from the WAN only with on_wan, in both families."""
    out = run_in_netns(SCRIPT, tmp_path)
    closed = {"tunnel4": False, "tunnel6": False, "wan4": False, "wan6": False}
    assert out["off"] == {**closed, "peers": []}
    assert out["on"] == {**closed, "tunnel4": True, "tunnel6": True,
                         "peers": ["10.77.0.2", "2001:db8:100:1::2"]}
    assert out["on_wan"] == {"tunnel4": True, "tunnel6": True, "wan4": True, "wan6": True,
                             "peers": ["10.77.0.2", "2001:db8:100:1::2", "203.0.113.2",
                                       "2001:db8:ff::2"]}
