"""The setup wizard's model: the steps a role asks, the config the answers
make on top of the config in force, and the loader's own messages under the
answer they name."""

from __future__ import annotations

from pathlib import Path

import pytest

import keel.config
from keel.config.errors import ConfigError
from keel.config.load import parse_config
from keel.parse.nic_first_seen import FirstSeen
from keel.ui import settings_model
from keel.ui import setup_model as m
from tests.fixtures.ports import PORTS, TWO_PORTS, VPS_PORT

ROOT = Path(__file__).resolve().parents[3]
SHIPPED = parse_config((ROOT / "overlay/etc/keel/keel.toml").read_text()).config
EXAMPLES = Path(keel.config.__file__).parent / "examples"
EDGE = parse_config((EXAMPLES / "edge.toml").read_text()).config
HUB = parse_config((EXAMPLES / "hub.toml").read_text()).config
BASE = settings_model.as_dict(SHIPPED)
KEY = "HlOu1tgN6jIPCqo/B9y+b7TT1bltyagEMGZGjSZNPVI="
ENS3, ENS4, ENS5 = (f"mac:52:54:00:12:34:0{i}" for i in (1, 2, 3))


def answers(**kw) -> m.Answers:
    """The first boot's answers on PORTS, the LAN picked on ens3."""
    a = m.pick_nic(m.from_config(SHIPPED, PORTS, first_boot=True), "lan", PORTS[0], PORTS)
    for name, value in kw.items():
        a = m.set_answer(a, name, value)
    return a


def config_of(a: m.Answers, base=BASE):
    return parse_config(m.proposed_text(a, base)).config


def test_the_shipped_default_gives_an_edge_with_the_defaults():
    a = answers()
    assert (a.role, a.wan_mode, a.tunnel, a.shaping) == ("edge", "dhcp", "none", "off")
    assert (a.lan_address, a.dhcp_start, a.dhcp_end) == m.LAN_DEFAULTS
    # eth0 is not on this box: the WAN is the first port with a link, named by its MAC
    assert (a.wan_interface, a.lan_interface) == (ENS4, ENS3)
    assert m.check(a, BASE, PORTS).count == 0
    cfg = config_of(a)
    assert cfg.wan.interface == ENS4 and cfg.lan.interface == ENS3
    assert not cfg.wireguard.enabled and cfg.wan.shaping.upload_kbit == 0


def test_steps_of_each_role():
    assert m.steps(answers()) == ["role", "nics", "wan", "lan", "tunnel", "shaping", "done"]
    assert "lan" not in m.steps(answers(role="hub"))
    assert [x.name for x in m.asks("nics", answers(role="hub"))] == ["wan_interface"]


def test_picking_the_other_ones_nic_swaps_them():
    a = answers()
    b = m.pick_nic(a, "wan", PORTS[0], PORTS)
    assert (b.wan_interface, b.lan_interface) == (ENS3, ENS4)
    c = m.pick_nic(b, "lan", PORTS[2], PORTS)
    assert (c.wan_interface, c.lan_interface) == (ENS3, ENS5)
    assert m.nic_use(c, PORTS[2], PORTS) == "LAN" and m.nic_use(c, PORTS[1], PORTS) == ""
    assert m.pick_nic(answers(role="hub"), "lan", PORTS[0], PORTS).lan_interface == ""


def test_the_lan_is_never_guessed_among_several_ports():
    """On first boot the shipped default's eth1 is no one's choice: with
    three ports the LAN waits for the user's pick, and the step says so."""
    a = m.from_config(SHIPPED, PORTS, first_boot=True)
    assert (a.role, a.wan_interface, a.lan_interface) == ("edge", ENS4, "")
    assert m.check(a, BASE, PORTS).errors["lan_interface"] == [
        "LAN: no port chosen: [l] on its row, or [g] to find it by its cable"]
    assert m.step_problems("nics", a, m.check(a, BASE, PORTS))


def test_a_two_port_machine_gets_the_other_port_as_its_lan_by_identity():
    a = m.from_config(SHIPPED, TWO_PORTS, first_boot=True)
    assert (a.wan_interface, a.lan_interface) == ("mac:52:54:00:4b:00:00",
                                                  "mac:52:54:00:4b:00:01")
    assert m.check(a, BASE, TWO_PORTS).count == 0
    assert m.summary(a, TWO_PORTS)[1:5] == [
        "WAN        mac:52:54:00:4b:00:00, eth0 today", "           by DHCP",
        "LAN        mac:52:54:00:4b:00:01, eth1 today",
        "           192.168.77.1/24, DHCP 192.168.77.100 .. 192.168.77.199"]


def test_a_one_port_machine_is_offered_the_hub_and_an_edge_there_gets_no_lan():
    a = m.from_config(SHIPPED, VPS_PORT, first_boot=True)
    assert (a.role, a.wan_interface, a.lan_interface) == ("hub", "mac:fa:16:3e:00:00:07", "")
    assert "lan" not in m.steps(a) and m.check(a, BASE, VPS_PORT).count == 0
    assert config_of(a).lan is None
    edge = m.default_nics(m.set_answer(a, "role", "edge"), VPS_PORT)
    assert edge.lan_interface == ""  # never eth1 of the shipped default
    line = m.check(edge, BASE, VPS_PORT).errors["lan_interface"][0]
    assert line.startswith("LAN: an edge needs a second port for its LAN")


def test_a_wizard_opened_again_keeps_the_users_own_lan_though_no_port():
    """A bridge as the LAN (the user's config) stays; a name on no port
    that the user did not write is refused."""
    base = settings_model.with_value(BASE, "lan.interface", "br-lan")
    config = parse_config(settings_model.proposed_text(base)).config
    a = m.from_config(config, PORTS)
    assert a.lan_interface == "br-lan" and m.kept_specs(config, False)[1] == "br-lan"
    assert "lan_interface" not in m.check(a, base, PORTS, m.kept_specs(config, False)).errors
    assert "lan_interface" in m.check(a, base, PORTS).errors


def test_a_static_wan_asks_address_and_gateway_with_the_loaders_messages():
    a = answers(wan_mode="static")
    assert [x.name for x in m.asks("wan", a)] == ["wan_mode", "wan_address", "wan_gateway"]
    verdict = m.check(a, BASE)
    assert verdict.errors == {"wan_address": ["wan.address: missing: mode is static"],
                              "wan_gateway": ["wan.gateway: missing: mode is static (the "
                                              "default route)"]}
    assert m.step_problems("wan", a, verdict) and not m.step_problems("lan", a, verdict)
    bad = m.set_answer(a, "wan_address", "203.0.113.300/24")
    assert m.check(bad, BASE).errors["wan_address"][0].startswith("wan.address: ")


def test_a_vps_slash_32_with_an_on_link_gateway_is_accepted():
    a = answers(role="hub", wan_mode="static", wan_address="198.51.100.7/32",
                wan_gateway="198.51.100.1")
    assert m.check(a, BASE).count == 0
    assert config_of(a).wan.address == "198.51.100.7/32"


def test_dhcp_leaves_address_and_gateway_out():
    a = answers(wan_mode="static", wan_address="203.0.113.7/24", wan_gateway="203.0.113.1")
    a = m.set_answer(a, "wan_mode", "dhcp")
    cfg = config_of(a)
    assert cfg.wan.address is None and cfg.wan.gateway is None


def test_lan_relations_are_the_loaders():
    a = answers(dhcp_start="192.168.78.100")
    assert m.check(a, BASE).errors == {
        "dhcp_start": ["lan.dhcp_start: not inside the LAN 192.168.77.0/24"]}
    a = answers(lan_interface=ENS4)
    assert "lan_interface" in m.check(a, BASE).errors  # the same NIC as the WAN
    a = answers(lan_interface="ens4")  # the same port by another name
    assert m.check(a, BASE, PORTS).errors["lan_interface"][0].startswith(
        "LAN: ens4 is the WAN")


def test_a_peer_by_hand_on_an_edge():
    a = answers(tunnel="manual")
    assert [x.name for x in m.asks("tunnel", a)] == [
        "tunnel", "tunnel_address", "peer_public_key", "peer_endpoint", "peer_allowed_ips"]
    assert m.check(a, BASE).errors["peer_public_key"][0].startswith(
        "wireguard.peer[0].public_key: ")
    a = m.set_answer(a, "peer_public_key", KEY)
    a = m.set_answer(a, "peer_endpoint", "203.0.113.2:51820")
    assert m.check(a, BASE).count == 0
    wg = config_of(a).wireguard
    assert wg.enabled and wg.address == ("10.77.0.2/24",)
    (peer,) = wg.peer
    assert (peer.public_key, peer.endpoint, peer.allowed_ips, peer.keepalive) == (
        KEY, "203.0.113.2:51820", ("10.77.0.1/32",), 25)
    a = m.set_answer(a, "peer_allowed_ips", "10.77.0.1/32, 192.168.77.0/25")
    assert m.check(a, BASE).errors["peer_allowed_ips"][0].startswith(
        "wireguard.peer[0].allowed_ips[1]: ")


def test_a_hub_gets_its_defaults_and_extras():
    a = answers(role="hub")
    assert a.tunnel_address == "10.77.0.1/24" and a.peer_allowed_ips == "10.77.0.2/32"
    assert m.choices("tunnel", a) == m.HUB_TUNNELS
    cfg = config_of(a)
    assert cfg.lan is None and cfg.wireguard.enabled and cfg.wireguard.peer == ()
    assert cfg.wireguard.address == ("10.77.0.1/24",) and cfg.wireguard.listen_port == 51820
    assert cfg.firewall.forward_tunnel_to_wan and cfg.selftest.iperf3_server
    a = m.set_answer(a, "listen_port", "70000")
    assert m.check(a, BASE).errors["listen_port"][0].startswith("wireguard.listen_port: ")
    a = m.set_answer(m.set_answer(a, "listen_port", "51821"), "tunnel", "manual")
    a = m.set_answer(a, "peer_public_key", KEY)
    (peer,) = config_of(a).wireguard.peer
    assert peer.endpoint is None and peer.keepalive == 0  # the edge reaches the hub


def test_the_self_test_is_offered_only_with_a_tunnel():
    assert "selftest" not in m.choices("shaping", answers())
    a = answers(tunnel="manual", shaping="selftest")
    assert a.shaping == "selftest"
    assert m.set_answer(a, "tunnel", "none").shaping == "off"
    assert config_of(m.set_answer(a, "peer_public_key", KEY)).wan.shaping.upload_kbit == 0


def test_rates_by_hand():
    a = answers(shaping="manual", upload_kbit="4500", download_kbit="18000")
    shaping = config_of(a).wan.shaping
    assert (shaping.upload_kbit, shaping.download_kbit) == (4500, 18000)
    bad = m.set_answer(a, "upload_kbit", "fast")
    assert m.check(bad, BASE).errors["upload_kbit"][0].startswith("wan.shaping.upload_kbit: ")
    with pytest.raises(ConfigError):
        m.proposed_text(bad, BASE)


def test_opened_again_it_starts_where_the_router_is():
    a = m.from_config(EDGE)
    assert (a.role, a.tunnel, a.shaping, a.upload_kbit) == ("edge", "manual", "manual", "4500")
    assert a.peer_allowed_ips == "10.77.0.1/32, 172.31.77.0/24"
    base = settings_model.as_dict(EDGE)
    assert m.proposed_text(a, base) == settings_model.proposed_text(base)  # nothing changes
    h = m.from_config(HUB)
    assert (h.role, h.wan_mode, h.tunnel) == ("hub", "static", "manual")
    base = settings_model.as_dict(HUB)
    assert m.proposed_text(h, base) == settings_model.proposed_text(base)


def test_no_tunnel_on_an_edge_turns_what_needs_one_off():
    base = settings_model.as_dict(EDGE)
    a = m.set_answer(m.from_config(EDGE), "tunnel", "none")
    cfg = parse_config(m.proposed_text(a, base)).config
    assert not cfg.wireguard.enabled and cfg.wan.shaping.attach == "wan"


def test_pairing_asks_the_hubs_address_and_code_on_an_edge():
    a = answers(tunnel="pair")
    assert [x.name for x in m.asks("tunnel", a)] == ["tunnel", "hub_address", "pair_code"]
    verdict = m.check(a, BASE)
    assert verdict.errors["hub_address"][0].startswith("hub's address: empty")
    assert verdict.errors["pair_code"] == ["code: the code has 8 digits; 0 were typed"]
    a = m.set_answer(m.set_answer(a, "hub_address", "203.0.113.2"), "pair_code", "1234-5678")
    assert m.check(a, BASE).count == 0
    assert "selftest" in m.choices("shaping", a)
    cfg = config_of(a)  # the tunnel comes on when keel pair settles it
    assert not cfg.wireguard.enabled and cfg.wireguard.peer == ()
    assert any("203.0.113.2" in line for line in m.summary(a))


def test_pairing_on_a_hub_applies_the_tunnel_without_a_peer():
    a = answers(role="hub", tunnel="pair")
    assert [x.name for x in m.asks("tunnel", a)] == ["tunnel", "tunnel_address", "listen_port"]
    assert m.check(a, BASE).count == 0
    wg = config_of(a).wireguard
    assert wg.enabled and wg.address == ("10.77.0.1/24",) and wg.peer == ()


def test_the_summary_says_what_will_be_set():
    lines = m.summary(answers(role="hub", tunnel="manual", peer_public_key=KEY))
    assert lines[0] == "role       hub" and any(line.startswith("peer       HlOu1tgN6j")
                                                for line in lines)
    assert all(len(line) <= 76 for line in m.summary(answers(), PORTS))


def test_a_router_still_called_keel_is_named_after_its_role():
    """Pairing names each peer after its host name: two routers both called
    "keel" would be "keel" and "keel-2" on the hub."""
    assert SHIPPED.system.hostname == "keel"
    assert config_of(answers()).system.hostname == "edge"
    assert config_of(answers(role="hub")).system.hostname == "hub"
    named = settings_model.with_value(BASE, "system.hostname", "office")
    assert config_of(answers(role="hub"), named).system.hostname == "office"


def test_the_wan_starts_where_keel_first_found_it():
    seen = {"wan.interface": FirstSeen("eth0", ENS5, "eth0", "e1000e"),
            "lan.interface": FirstSeen("eth1", ENS3, "eth1", "e1000")}
    a = m.from_config(SHIPPED, PORTS, first_boot=True, first_seen=seen)
    assert (a.wan_interface, a.lan_interface) == (ENS5, "")  # the shipped LAN: no one's choice
    a = m.from_config(SHIPPED, PORTS, first_seen=seen)  # opened again: the user's own
    assert (a.wan_interface, a.lan_interface) == (ENS5, ENS3)
