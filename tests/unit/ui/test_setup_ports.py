"""The setup wizard's ports (keel.ui.setup_ports): what names a port, the
defaults, the picks and what keeps the port step from going on."""

from __future__ import annotations

import dataclasses

from keel.parse.nic_first_seen import FirstSeen
from keel.ui import setup_ports as sp
from tests.fixtures.ports import PORTS, TWO_PORTS, VPS_PORT, port

ENS3, ENS4, ENS5 = (f"mac:52:54:00:12:34:0{i}" for i in (1, 2, 3))


def test_a_port_is_named_by_its_permanent_mac_else_its_pci_function():
    assert sp.spec_of(PORTS[0]) == ENS3
    moved = dataclasses.replace(PORTS[0], mac="02:00:00:00:00:01", permanent_mac="")
    assert sp.spec_of(moved) == "pci:0000:00:03.0"
    assert sp.port_named("pci:0000:00:03.0", [moved]) == moved


def test_a_spec_names_its_port_whatever_it_is_called():
    assert sp.port_named(ENS4, PORTS) == PORTS[1]
    assert sp.port_named("ens4", PORTS) == PORTS[1]
    assert sp.port_named("eth9", PORTS) is None and sp.port_named("", PORTS) is None
    twins = [port("a", "52:54:00:00:00:01", pci="0000:01:00.0"),
             port("b", "52:54:00:00:00:02", pci="0000:01:00.0")]
    assert sp.port_named("pci:0000:01:00.0", twins) is None  # ambiguous: none


def test_the_defaults():
    # the config's WAN if here, by identity; a two-port machine's other port the LAN
    assert sp.with_defaults("eth0", "", "edge", TWO_PORTS) == (
        "mac:52:54:00:4b:00:00", "mac:52:54:00:4b:00:01")
    # else the first port with a link; of several others, no LAN guessed
    assert sp.with_defaults("eth0", "", "edge", PORTS) == (ENS4, "")
    # a LAN on a port stays on it, one on no port goes unless the user's own
    assert sp.with_defaults(ENS4, "ens5", "edge", PORTS) == (ENS4, ENS5)
    assert sp.with_defaults(ENS4, "eth1", "edge", PORTS) == (ENS4, "")
    assert sp.with_defaults(ENS4, "br-lan", "edge", PORTS, kept=("br-lan",)) == (
        ENS4, "br-lan")
    assert sp.with_defaults("eth0", "eth1", "hub", VPS_PORT) == ("mac:fa:16:3e:00:00:07", "")
    assert sp.with_defaults("eth0", "eth1", "edge", []) == ("eth0", "")


def test_picks_swap_and_rows_say_their_use():
    assert sp.pick(ENS4, ENS3, "wan", PORTS[0], PORTS) == (ENS3, ENS4)
    assert sp.pick(ENS4, ENS3, "lan", PORTS[2], PORTS) == (ENS4, ENS5)
    assert [sp.use(ENS4, ENS3, "edge", p, PORTS) for p in PORTS] == ["LAN", "WAN", ""]
    assert [sp.use(ENS4, ENS3, "hub", p, PORTS) for p in PORTS] == ["", "WAN", ""]


def test_what_keeps_the_step_from_going_on():
    assert sp.problems(ENS4, ENS3, "edge", PORTS) == {}
    assert sp.problems("", "", "edge", PORTS) == {
        "wan_interface": "WAN: no port chosen: [w] on its row, or [f] to find it by its cable",
        "lan_interface": "LAN: no port chosen: [l] on its row, or [g] to find it by its cable"}
    assert sp.problems(ENS4, "eth1", "edge", PORTS)["lan_interface"].startswith(
        "LAN eth1: on no port here")
    assert sp.problems("mac:fa:16:3e:00:00:07", "", "hub", VPS_PORT) == {}
    assert "second port" in sp.problems("mac:fa:16:3e:00:00:07", "", "edge",
                                        VPS_PORT)["lan_interface"]


def test_the_review_says_the_kernel_name_today():
    assert sp.today(ENS4, PORTS) == f"{ENS4}, ens4 today"
    assert sp.today("ens4", PORTS) == "ens4" and sp.today("br-lan", PORTS) == "br-lan"
    assert sp.today("", PORTS) == "?"


def test_the_role_note():
    assert sp.role_note(VPS_PORT).startswith("one port found (eth0): the hub role is offered")
    assert sp.role_note(PORTS) == "" and sp.default_role("edge", PORTS) == "edge"
    assert sp.default_role("edge", VPS_PORT) == "hub"


def test_a_kernel_name_that_moved_is_taken_where_keel_first_found_it():
    """The config says eth0; keel first found the WAN on the port whose MAC
    ens5 has (a new driver renamed the ports since): the WAN is ens5."""
    seen = {"wan.interface": FirstSeen("eth0", ENS5, "eth0", "e1000e")}
    assert sp.first_found("eth0", "wan.interface", seen, PORTS) == ENS5
    assert sp.first_found("eth1", "wan.interface", seen, PORTS) == "eth1"  # said otherwise
    gone = {"wan.interface": FirstSeen("eth0", "mac:02:00:00:00:00:09", "eth0", "igc")}
    assert sp.first_found("eth0", "wan.interface", gone, PORTS) == "eth0"
    assert sp.first_found("eth0", "lan.interface", seen, PORTS) == "eth0"
