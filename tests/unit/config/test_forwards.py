"""Port forwards ([[forward]]): the two syntaxes (port_range, forward_target),
the rules between a forward and the router (keel.config.forward_relations),
each through the loader with real keel.toml text and its key path, and the
model built from the same [[forward]] table on a hub and on its edge."""

from __future__ import annotations

import base64
import ipaddress

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from keel.adaptive.wire import PORT as PROBE_PORT
from keel.config import checks
from keel.config.checks import (
    MAX_RANGE_PORTS,
    forward_target,
    parse_ports,
    parse_target,
    port_range,
)
from keel.config.describe import walk
from keel.config.dump import to_toml
from keel.config.errors import ConfigError
from keel.config.load import load_text
from keel.model import model_from_config
from keel.model import router as m
from keel.ports import PAIRING_TCP as PAIRING_PORT
from keel.ui import settings_model
from tests.unit.config.config_cli import run_config

KEY_A = "HlOu1tgN6jIPCqo/B9y+b7TT1bltyagEMGZGjSZNPVI="
KEY_B = "DGDJOoNeCQAxEAKW/6R/XQpwi4FNhdoJTo1LLorzzRg="
KEY_C = "YBD0vc5wBNbTSDr/YHNGi7o7ZbvVSZ0ULLdGFd1MHGs="

# the hub: a VPS (no LAN) with the edge as its peer, the edge's LAN behind it
HUB = f"""
[system]
hostname = "hub"

[wan]
mode = "static"
address = "203.0.113.2/24"
gateway = "203.0.113.1"

[wireguard]
enabled = true
address = ["10.77.0.1/24"]
route = "prefixes"
prefixes = ["192.168.77.0/24"]

[[wireguard.peer]]
name = "edge"
public_key = "{KEY_A}"
allowed_ips = ["10.77.0.2/32", "192.168.77.0/24"]
"""

# the edge: its LAN, and the hub as its one peer with an endpoint
EDGE = f"""
[system]
hostname = "edge"

[lan]
address = "192.168.77.1/24"

[wireguard]
enabled = true
address = ["10.77.0.2/24"]

[[wireguard.peer]]
name = "hub"
public_key = "{KEY_B}"
endpoint = "203.0.113.2:51820"
allowed_ips = ["10.77.0.1/32"]
"""

# a router with a LAN and no tunnel: local forwards only
HOME = """
[system]
hostname = "home"

[lan]
address = "192.168.1.1/24"
dhcp_start = "192.168.1.100"
dhcp_end = "192.168.1.199"
"""

# the same tables on the hub and on the edge
FORWARDS = """
[[forward]]
name = "web"
port = 8080
to = "192.168.77.50:80"
via = "edge"

[[forward]]
name = "game"
protocol = "both"
port = "27000-27010"
to = "192.168.77.51"
via = "edge"
snat = true
"""


def forward(name: str = "web", port: str | int = 8080, to: str = "192.168.77.50:80",
            via: str | None = "edge", protocol: str = "tcp") -> str:
    """One [[forward]] table as TOML."""
    port_text = str(port) if isinstance(port, int) else f'"{port}"'
    via_line = f'via = "{via}"\n' if via is not None else ""
    return (f'\n[[forward]]\nname = "{name}"\nprotocol = "{protocol}"\nport = {port_text}\n'
            f'to = "{to}"\n{via_line}')


def problems(text: str) -> list[str]:
    """Every problem the loader finds, as "key.path: reason"."""
    with pytest.raises(ConfigError) as err:
        load_text(text, "t.toml")
    return [str(p) for p in err.value.problems]


def only(text: str) -> str:
    [line] = problems(text)
    return line


# --- the syntaxes, through the loader --------------------------------------------------


def test_a_port_loads_as_an_integer_or_a_string():
    cfg = load_text(HUB + forward(port=8080) + forward("range", port="8000-8010",
                                                       to="192.168.77.50"))
    assert [f.port for f in cfg.forward] == [8080, "8000-8010"]
    assert load_text(HUB + forward(port="8080")).forward[0].port == "8080"


@pytest.mark.parametrize(("port", "reason"), [
    ("0", "outside 1-65535"),
    ("65536", "outside 1-65535"),
    ('"0"', "a port outside 1-65535"),
    ('"65536"', "a port outside 1-65535"),
    ('"99999999999999999999"', "a port outside 1-65535"),
    ('"+80"', "not a port or a range"),
    ('"-80"', "not a port or a range"),
    ('" 80"', "not a port or a range"),
    ('"80 "', "not a port or a range"),
    ('"8000 - 8010"', "not a port or a range"),
    ('"8000-"', "not a port or a range"),
    ('"8000-8010-8020"', "not a port or a range"),
    ('"\u0668\u0660"', "not a port or a range"),  # Arabic-Indic digits
    ('"0x50"', "not a port or a range"),
    ('""', "not a port or a range"),
    ('"080"', "a port is written without leading zeros"),
    ('"8010-8000"', "a range goes up: its first port is above its last"),
    ('"1-1001"', f"a range of 1001 ports (at most {MAX_RANGE_PORTS})"),
    ("true", "must be a string or an integer, not true or false"),
    ("80.0", "must be a string or an integer, not a number"),
])
def test_a_bad_port_is_named_at_its_key(port, reason):
    text = HUB + f'\n[[forward]]\nname = "web"\nport = {port}\nto = "192.168.77.50"\n' \
                 'via = "edge"\n'
    line = only(text)
    assert line.startswith("forward[0].port: ") and reason in line, line


def test_the_largest_range_loads():
    cfg = load_text(HUB + forward(port="1000-1999", to="192.168.77.50"))
    assert model_from_config(cfg).forwards[0].public == "1000-1999"


@pytest.mark.parametrize(("to", "reason"), [
    ("[2001:db8::5]", "[...] is for an IPv6 address with a port: write the address alone"),
    ("::ffff:192.168.77.50", "an IPv4-mapped IPv6 address: write an IPv4 target as A.B.C.D"),
    ("fe80::1%eth0", "zone id"),
    ("192.168.77.50%eth0", "zone id"),
    ("192.168.77.50 :80", "a space at character 14"),
    (" 192.168.77.50", "a space at character 1"),
    ("192.168.77.50\\t", "white space or a control character (\\x09) at character 14"),
    ("192.168.77.50\\u001b:80", "a control character (\\x1b)"),
    ("nas.lan:80", "a character that is not part of one (n) at character 1"),
    ("192.168.77.500", "not an IP address"),
    ("192.168.077.50", "not an IP address"),
    ("192.168.77.0/24", "a '/': give the address alone"),
    ("", "empty"),
    ("[192.168.77.50]:80", "an IPv4 target is written without [...]"),
    ("192.168.77.50:", "the port after ':': not a number"),
    ("192.168.77.50:+80", "the port after ':': not a number"),
    ("192.168.77.50:80-90", "the port after ':': not a number"),
    ("192.168.77.50:0", "the port after ':': a port outside 1-65535"),
    ("192.168.77.50:65536", "the port after ':': a port outside 1-65535"),
    ("192.168.77.50:080", "the port after ':': a port is written without leading zeros"),
])
def test_a_bad_target_is_named_at_its_key(to, reason):
    line = only(HUB + forward(to=to))
    assert line.startswith("forward[0].to: ") and reason in line, line


def test_a_target_message_never_repeats_the_value():
    line = only(HUB + forward(to="192.168.77.50%evil"))
    assert "evil" not in line


def test_the_schema_describes_the_keys():
    by_path = {info.path: info for info in walk()}
    assert by_path["forward"].type == "array of tables"
    assert by_path["forward[].port"].type == "string or integer"
    assert by_path["forward[].port"].required and by_path["forward[].to"].required
    assert by_path["forward[].protocol"].default == "tcp"
    assert checks.SYNTAXES["port_range"] is port_range
    assert checks.SYNTAXES["forward_target"] is forward_target


# --- the forwards alone ----------------------------------------------------------------


def test_names_are_unique():
    text = HUB + forward("web", port=8080) + forward("web", port=8081)
    assert only(text) == "forward[1].name: duplicate of forward[0]"


def test_a_range_keeps_its_ports():
    assert only(HUB + forward(port="8000-8010", to="192.168.77.50:80")) == (
        "forward[0].to: a range maps to the same ports: give the target without a port")


def test_a_one_port_range_may_name_the_target_port():
    assert load_text(HUB + forward(port="8080-8080", to="192.168.77.50:80")).forward


def test_duplicate_names_are_found_even_when_another_section_is_bad():
    text = HUB.replace('hostname = "hub"', 'hostname = "-bad-"') + forward() + forward()
    assert set(problems(text)) == {
        "system.hostname: not a host name (1-63 letters, digits and '-', not starting or "
        "ending with '-')",
        "forward[1].name: duplicate of forward[0]"}


# --- the role, from via ----------------------------------------------------------------


def test_via_naming_neither_lists_the_peers():
    assert only(HUB + forward(via="edg")) == (
        "forward[0].via: names neither this router (system.hostname = hub) nor a "
        "[[wireguard.peer]] (the peers are named edge)")


def test_via_naming_neither_with_no_named_peer():
    text = HUB.replace('name = "edge"\n', "") + forward(via="edge")
    assert only(text) == ("forward[0].via: names neither this router (system.hostname = hub) "
                          "nor a [[wireguard.peer]] (no peer has a name)")


def test_via_naming_neither_lists_at_most_a_few_peers():
    peers = "".join(f'\n[[wireguard.peer]]\nname = "p{i}"\npublic_key = "{key}"\n'
                    f'allowed_ips = ["10.77.0.{10 + i}/32"]\n'
                    for i, key in enumerate(_keys(12)))
    line = only(HUB + peers + forward(via="nobody"))
    assert "the peers are named edge, p0, p1, p2, p3, p4, p5, p6 and 5 more" in line


def _keys(count: int) -> list[str]:
    return [base64.b64encode(bytes([i + 1]) * 32).decode() for i in range(count)]


def test_a_peer_named_like_this_router_is_ambiguous():
    text = HUB.replace('name = "edge"', 'name = "hub"') + forward(via="hub")
    assert only(text) == ("forward[0].via: ambiguous: this router's own host name "
                          "(system.hostname) and the name of wireguard.peer[0]; rename one "
                          "of them")


# --- outer: the hub ----------------------------------------------------------------------


def test_outer_needs_the_tunnel():
    text = HUB.replace("enabled = true", "enabled = false") + forward()
    assert only(text) == ("forward[0].via: names wireguard.peer[0], but wireguard is not "
                          "enabled")


def test_outer_target_is_in_a_lan_the_peer_routes():
    assert only(HUB + forward(to="192.168.78.50:80")) == (
        "forward[0].to: not in a LAN that edge routes (its allowed_ips: 10.77.0.2/32, "
        "192.168.77.0/24)")


def test_outer_target_in_another_peers_lan_is_refused():
    other = (f'\n[[wireguard.peer]]\nname = "office"\npublic_key = "{KEY_C}"\n'
             'allowed_ips = ["10.77.0.3/32", "192.168.88.0/24"]\n')
    hub = HUB.replace('prefixes = ["192.168.77.0/24"]',
                      'prefixes = ["192.168.77.0/24", "192.168.88.0/24"]')
    line = only(hub + other + forward(to="192.168.88.10:80", via="edge"))
    assert line.startswith("forward[0].to: not in a LAN that edge routes")
    assert load_text(hub + other + forward(to="192.168.88.10:80", via="office")).forward


def test_outer_ipv6_allowed_ips_do_not_hold_an_ipv4_target():
    text = HUB.replace('"192.168.77.0/24"', '"fd00:77::/64"') + forward()
    assert only(text).startswith("forward[0].to: not in a LAN that edge routes")


# --- inner: the edge ---------------------------------------------------------------------


def test_inner_needs_a_lan():
    text = EDGE.replace('[lan]\naddress = "192.168.77.1/24"\n', "") + forward(via="edge")
    assert only(text) == ("forward[0].to: via is this router (the edge the target is behind), "
                          "but this router has no [lan]")


@pytest.mark.parametrize(("to", "reason"), [
    ("192.168.78.50:80", "not inside the LAN 192.168.77.0/24 (lan.address): via is this "
                         "router (the edge the target is behind)"),
    ("192.168.77.1:80", "is this router's own LAN address (lan.address), not a host behind it"),
    ("192.168.77.0:80", "is the network address of 192.168.77.0/24, not a host"),
    ("192.168.77.255:80", "is the broadcast address of 192.168.77.0/24, not a host"),
])
def test_inner_target_is_a_host_of_the_lan(to, reason):
    assert only(EDGE + forward(to=to)) == f"forward[0].to: {reason}"


def test_inner_needs_the_tunnel():
    text = EDGE.replace("enabled = true", "enabled = false") + forward()
    assert only(text) == ("forward[0].via: this router is the edge the target is behind "
                          "(via = system.hostname), but wireguard is not enabled: the "
                          "connections come through the tunnel from the hub")


def test_inner_needs_one_hub():
    none = EDGE.replace('endpoint = "203.0.113.2:51820"\n', "") + forward()
    assert only(none) == ("forward[0].via: this router is the edge the target is behind: the "
                          "connections come from the hub, the one peer with an endpoint; of "
                          "the peers none has one")
    two = EDGE + (f'\n[[wireguard.peer]]\nname = "hub2"\npublic_key = "{KEY_C}"\n'
                  'endpoint = "198.51.100.2:51820"\nallowed_ips = ["10.77.0.3/32"]\n')
    assert only(two + forward()).endswith(
        "of the peers 2 have one (wireguard.peer[0], wireguard.peer[1])")


def test_inner_ports_are_the_hubs_only_keels_own_there_are_refused():
    """An inner forward's public port is the hub's: the edge's own firewall
    and forwards do not hold it; but keel's own ports on the hub (its SSH,
    pairing, WireGuard, the DHCP client) would take this LAN's connections
    to the hub's address to the target, and the hub refuses them anyway."""
    text = EDGE + "[firewall]\nopen_tcp = [8080]\n" + forward(port=8080)
    assert len(load_text(text).forward) == 1
    assert problems(EDGE + forward(port=22) + forward("wg", port="51800-51830",
                                                      protocol="udp", to="192.168.77.5")
                    + forward("dhcp", port=67, protocol="udp", to="192.168.77.5")) == [
        "forward[0].port: tcp 22 is keel's own on the hub: SSH (this LAN's connections to it "
        "would be sent to the target)",
        "forward[1].port: udp 51821 is keel's own on the hub: adaptive CAKE's delay probes "
        "(this LAN's connections to it would be sent to the target)",
        "forward[1].port: udp 51820 is keel's own on the hub: WireGuard (the hub's endpoint) "
        "(this LAN's connections to it would be sent to the target)",
        "forward[2].port: udp 67 is keel's own on the hub: DHCP (this LAN's connections to it "
        "would be sent to the target)"]


def test_an_outer_forward_reaches_a_host_of_the_edges_lan_only():
    """Not the edge itself (its tunnel address, whatever the port), not keel's
    reflector on any host (udp 51821 on the target), and only where the hub
    routes into the tunnel (route = "none" would send the connections out of
    its WAN)."""
    hub = HUB.replace('"10.77.0.2/32", "192.168.77.0/24"', '"10.77.0.0/28", "192.168.77.0/24"')
    assert only(hub + forward(to="10.77.0.2:22")) == (
        "forward[0].to: inside the tunnel's own network (wireguard.address): an edge itself, "
        "not a host of its LAN (its own services are not forwarded)")
    assert only(HUB + forward(to="192.168.77.1:51821", port=9000, protocol="udp")) == (
        "forward[0].to: udp 51821 on the target is keel's own: adaptive CAKE's delay probes "
        "(a keel router's reflector is not forwarded to)")
    assert only(HUB + forward(to="192.168.77.1:51800", port="9000-9030", protocol="both")
                ) == ("forward[0].to: a range maps to the same ports: give the target without "
                      "a port")
    assert problems(HUB + forward(to="192.168.77.1", port="51810-51830", protocol="udp")
                    )[0].startswith("forward[0].to: udp 51821 on the target is keel's own")
    none = HUB.replace('route = "prefixes"\nprefixes = ["192.168.77.0/24"]\n', "")
    assert only(none + forward()) == (
        "forward[0].to: not routed through the tunnel (wireguard.route = none): its "
        "connections would leave by the WAN; set route = \"prefixes\" and list the edge's "
        "LAN in wireguard.prefixes")
    other = HUB.replace('prefixes = ["192.168.77.0/24"]', 'prefixes = ["192.168.78.0/24"]')
    assert any(p.startswith("forward[0].to: not routed through the tunnel (wireguard.route = "
                            "prefixes)") and p.endswith("add the edge's LAN to wireguard.prefixes")
               for p in problems(other + forward()))


# --- local: this router's own LAN ----------------------------------------------------------


def test_local_needs_a_lan():
    text = HUB + forward(via=None)
    assert only(text) == ("forward[0].to: a forward without via goes to a host in this "
                          "router's LAN (via: the peer it is behind), but this router has no "
                          "[lan]")


@pytest.mark.parametrize(("to", "reason"), [
    ("192.168.77.50:80", "not inside the LAN 192.168.1.0/24 (lan.address)"),
    ("192.168.1.1:80", "is this router's own LAN address (lan.address)"),
    ("192.168.1.0", "is the network address of 192.168.1.0/24"),
    ("192.168.1.255", "is the broadcast address of 192.168.1.0/24"),
])
def test_local_target_is_a_host_of_the_lan(to, reason):
    line = only(HOME + forward(to=to, via=None))
    assert line.startswith(f"forward[0].to: {reason}"), line


def test_a_local_forward_loads():
    cfg = load_text(HOME + forward(to="192.168.1.20:80", via=None))
    [fwd] = model_from_config(cfg).forwards
    assert (fwd.role, fwd.via, fwd.address, fwd.target_port) == ("local", None,
                                                                 "192.168.1.20", 80)


# --- the public ports ----------------------------------------------------------------------


def test_two_forwards_may_not_share_a_public_port():
    text = HUB + forward("a", port=8080) + forward("b", port="8000-8090", to="192.168.77.51")
    assert only(text) == "forward[1].port: overlaps forward[0] (a) on tcp"


def test_the_overlap_is_told_at_the_later_forward_in_the_file():
    text = HUB + forward("a", port="8000-8090", to="192.168.77.51") + forward("b", port=8000)
    assert only(text) == "forward[1].port: overlaps forward[0] (a) on tcp"


def test_tcp_and_udp_are_apart_and_both_is_both():
    assert load_text(HUB + forward("a", port=53, protocol="tcp", to="192.168.77.5")
                     + forward("b", port=53, protocol="udp", to="192.168.77.5")).forward
    text = HUB + forward("a", port=53, protocol="both", to="192.168.77.5") + forward(
        "b", port=53, protocol="udp", to="192.168.77.6")
    assert only(text) == "forward[1].port: overlaps forward[0] (a) on udp"
    text = HUB + forward("a", port=53, protocol="both", to="192.168.77.5") + forward(
        "b", port=53, protocol="both", to="192.168.77.6")
    assert only(text) == "forward[1].port: overlaps forward[0] (a) on tcp and udp"


def test_every_forward_in_a_nest_of_ranges_is_told():
    text = (HUB + forward("big", port="8000-8100", to="192.168.77.5")
            + forward("x", port="8010-8020", to="192.168.77.6")
            + forward("y", port="8015-8030", to="192.168.77.7"))
    assert problems(text) == ["forward[1].port: overlaps forward[0] (big) on tcp",
                              "forward[2].port: overlaps forward[0] (big) on tcp"]


def test_adjacent_ranges_do_not_overlap():
    assert load_text(HUB + forward("a", port="8000-8009", to="192.168.77.5")
                     + forward("b", port="8010-8019", to="192.168.77.6")).forward


@pytest.mark.parametrize(("protocol", "port", "reason"), [
    ("tcp", 22, "tcp 22 is keel's own: SSH"),
    ("tcp", PAIRING_PORT, f"tcp {PAIRING_PORT} is keel's own: pairing (keel pair)"),
    ("udp", PROBE_PORT, f"udp {PROBE_PORT} is keel's own: adaptive CAKE's delay probes"),
    ("udp", 67, "udp 67 is keel's own: DHCP"),
    ("udp", 68, "udp 68 is keel's own: DHCP"),
    ("udp", 51820, "udp 51820 is keel's own: WireGuard (wireguard.listen_port)"),
    ("both", "20-30", "tcp 22 is keel's own: SSH"),
])
def test_keels_own_ports_are_not_forwarded(protocol, port, reason):
    to = "192.168.77.50" if isinstance(port, str) else "192.168.77.50:80"
    assert only(HUB + forward(port=port, protocol=protocol, to=to)) == (
        f"forward[0].port: {reason}")


def test_the_ports_keel_leaves_free_are_forwarded():
    for protocol, port in (("udp", 22), ("tcp", PROBE_PORT), ("tcp", 67)):
        assert load_text(HUB + forward(port=port, protocol=protocol)).forward
    moved = HUB.replace("enabled = true", "enabled = true\nlisten_port = 51000")
    assert load_text(moved + forward(port=PAIRING_PORT, protocol="udp")).forward


def test_the_wireguard_port_is_the_one_configured():
    moved = HUB.replace("enabled = true", "enabled = true\nlisten_port = 51000")
    assert only(moved + forward(port=51000, protocol="udp")) == (
        "forward[0].port: udp 51000 is keel's own: WireGuard (wireguard.listen_port)")
    assert load_text(moved + forward(port=51820, protocol="udp")).forward


def test_the_wireguard_port_is_free_when_the_tunnel_is_off():
    text = HOME + forward(port=51820, protocol="udp", to="192.168.1.20", via=None)
    assert load_text(text).forward


def test_a_port_open_on_the_router_itself_is_not_forwarded():
    text = HUB + "\n[firewall]\nopen_tcp = [443, 8080]\nopen_udp = [8080]\n" + forward()
    assert only(text) == ("forward[0].port: tcp 8080 is open on the router itself "
                          "(firewall.open_tcp[1])")
    text = HUB + "\n[firewall]\nopen_udp = [8005]\n" + forward(
        port="8000-8010", protocol="both", to="192.168.77.50")
    assert only(text) == ("forward[0].port: udp 8005 is open on the router itself "
                          "(firewall.open_udp[0])")


# --- the model ---------------------------------------------------------------------------


def test_the_hub_and_the_edge_read_the_same_tables():
    hub = model_from_config(load_text(HUB + FORWARDS))
    edge = model_from_config(load_text(EDGE + FORWARDS))
    assert hub.forwards == (
        m.Forward("web", "tcp", 8080, 8080, "192.168.77.50", 80, "outer", via="edge"),
        m.Forward("game", "both", 27000, 27010, "192.168.77.51", None, "outer", via="edge",
                  snat=True))
    assert edge.forwards == tuple(
        m.Forward(f.name, f.protocol, f.port_low, f.port_high, f.address, f.target_port,
                  "inner", via=f.via, snat=f.snat) for f in hub.forwards)
    web, game = hub.forwards
    assert (web.public, web.target, web.target_ports, web.protocols) == (
        "8080", "192.168.77.50:80", "80", ("tcp",))
    assert (game.public, game.target, game.target_ports, game.protocols) == (
        "27000-27010", "192.168.77.51", "27000-27010", ("tcp", "udp"))


def test_no_forward_no_model_forward():
    assert model_from_config(load_text(HUB)).forwards == ()


# --- keel config show ----------------------------------------------------------------------


def test_show_writes_the_forwards_back(tmp_path, capsys):
    cfg = load_text(HUB + FORWARDS)
    text = to_toml(cfg)
    assert text.count("[[forward]]") == 2 and 'port = "27000-27010"' in text
    assert "port = 8080" in text and "via =" in text
    assert load_text(text) == cfg
    path = tmp_path / "keel.toml"
    path.write_text(HUB + FORWARDS)
    assert run_config(["config", "show", str(path)]) == 0
    assert 'to = "192.168.77.51"' in capsys.readouterr().out


def test_the_settings_screen_shows_the_forwards_not_edits_them():
    assert "forward" in [name for name, _ in settings_model.sections()]
    by_path = {f.path: f for f in settings_model.fields(load_text(HUB + FORWARDS))}
    shown = by_path["forward"]
    assert not shown.editable and "edit forwards in the file" in shown.note
    assert settings_model.tables_text(shown) == (
        "2 forwards: web tcp 8080 to 192.168.77.50:80; game both 27000-27010 to 192.168.77.51")
    assert settings_model.tables_text(by_path["wireguard.peer"]) == (
        "1 peer: 10.77.0.2/32, 192.168.77.0/24")


# --- properties of the two syntaxes --------------------------------------------------------

FAST = settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
ODD = [*"%\n\r\t \x0b\x0c\x00\x1b\x7f\u00a0\ufeff\u202e\u2028", *"[]:.-+/\\\"'\uff11\u0661"]
odd_text = st.text(st.one_of(st.sampled_from(ODD), st.sampled_from("0123456789."),
                             st.characters()), max_size=30)


def _ports_text(low: int, high: int) -> str:
    return str(low) if low == high else f"{low}-{high}"


@FAST
@given(st.one_of(odd_text, st.from_regex(r"[0-9+ -]{0,14}", fullmatch=True),
                 st.integers(-(2**70), 2**70)))
def test_port_range_never_raises_and_what_it_takes_round_trips(value):
    reason = port_range(value)
    parsed = parse_ports(value)
    assert reason is None or (isinstance(reason, str) and reason and reason.isprintable())
    if reason is None:
        assert isinstance(parsed, tuple)
        low, high = parsed
        assert 1 <= low <= high <= 65535 and high - low < MAX_RANGE_PORTS
        assert (value == low == high) if isinstance(value, int) else (
            value in (_ports_text(low, high), f"{low}-{high}"))  # "8080-8080" too
    else:
        assert parsed == reason


@FAST
@given(st.integers(1, 65535).flatmap(
    lambda low: st.tuples(st.just(low), st.integers(low, min(65535, low + MAX_RANGE_PORTS - 1)))))
def test_every_port_and_range_is_taken(bounds):
    low, high = bounds
    assert parse_ports(_ports_text(low, high)) == (low, high)
    assert parse_ports(low) == (low, low)


@FAST
@given(st.one_of(odd_text, st.ip_addresses().map(str),
                 st.tuples(st.ip_addresses(v=4).map(str), odd_text).map("".join)))
def test_forward_target_never_raises_and_what_it_takes_round_trips(value):
    reason = forward_target(value)
    assert reason is None or (isinstance(reason, str) and reason and reason.isprintable())
    if reason is None:
        addr, port = parse_target(value)
        parsed = ipaddress.ip_address(addr)
        assert str(parsed) == addr
        if parsed.version == 4:
            assert (addr if port is None else f"{addr}:{port}") == value
            assert all(ch in "0123456789.:" for ch in value)
        else:  # IPv6 (tests/unit/config/test_config_ipv6_syntax.py): canonical, no port here
            assert port is None and ipaddress.ip_address(value) == parsed
    else:
        assert parse_target(value) == reason


@FAST
@given(st.ip_addresses(v=4), st.one_of(st.none(), st.integers(1, 65535)))
def test_every_ipv4_target_is_taken(addr, port):
    text = str(addr) if port is None else f"{addr}:{port}"
    assert parse_target(text) == (str(addr), port)
