"""The settings screens' model: every key of the schema is a field (found by
walking the dataclasses here, not through describe), values typed as text are
judged by the loader itself, and the diff names each changed key."""

from __future__ import annotations

import dataclasses
import typing
from pathlib import Path

import keel.config
from keel.config.dump import to_toml
from keel.config.load import parse_config
from keel.config.schema import Config
from keel.ui import settings_model as m

EDGE = Path(keel.config.__file__).parent / "examples" / "edge.toml"


def edge() -> Config:
    return parse_config(EDGE.read_text()).config


def schema_keys(cls: type = Config, prefix: str = "") -> list[str]:
    """The paths of the leaf keys, tables of tables followed; an array of
    tables is one key."""
    out = []
    hints = typing.get_type_hints(cls)
    for f in dataclasses.fields(cls):
        path = f"{prefix}.{f.name}" if prefix else f.name
        hint = hints[f.name]
        alternatives = (hint,) if typing.get_origin(hint) is tuple else \
            typing.get_args(hint) or (hint,)
        table = [t for t in alternatives if dataclasses.is_dataclass(t)]
        if table:
            out += schema_keys(table[0], path)
        else:
            out.append(path)
    return out


def test_every_schema_key_is_a_field_in_schema_order():
    paths = [f.path for f in m.fields(edge())]
    assert paths == schema_keys()
    assert "wan.shaping.upload_kbit" in paths and "wireguard.peer" in paths
    assert [name for name, _ in m.sections()] == [f.name for f in dataclasses.fields(Config)]


def test_widgets_values_and_help_come_from_the_rules():
    by = {f.path: f for f in m.fields(edge())}
    up = by["wan.shaping.upload_kbit"]
    assert (up.kind, up.value, up.text, up.unit, up.section, up.key) == (
        "int", 4500, "4500", "kbit/s", "wan", "shaping.upload_kbit")
    assert "0..100000000 kbit/s" in up.help
    assert by["wan.shaping.nat"].kind == "switch"
    assert by["wan.mode"].kind == "select" and by["wan.mode"].choices == ("dhcp", "static")
    assert by["wan.interface"].kind == "text" and "ifname" in by["wan.interface"].help
    assert by["wan.shaping.overhead"].kind == "text"  # a preset or a number of bytes
    assert by["wireguard.address"].kind == "list" and by["wireguard.address"].text == \
        "10.77.0.2/24"
    assert by["wan.address"].optional and not by["wan.interface"].optional
    peers = by["wireguard.peer"]
    assert not peers.editable and "edit peers in the file" in peers.note and len(peers.value) == 1
    assert all(f.editable for f in by.values() if f.path.startswith("lan."))


def test_an_absent_lan_is_shown_not_edited():
    lan = [f for f in m.fields(Config()) if f.section == "lan"]
    assert lan and not any(f.editable for f in lan)
    assert "[lan]" in lan[0].note


def test_an_out_of_range_int_gets_the_loaders_message_with_its_key_path():
    data = m.with_value(m.as_dict(edge()), "wan.shaping.upload_kbit", "999999999")
    assert data["wan"]["shaping"]["upload_kbit"] == 999999999
    assert m.check(data) == ["wan.shaping.upload_kbit: outside 0-100000000 kbit/s"]
    assert m.check(m.with_value(data, "wan.shaping.upload_kbit", "5000")) == []


def test_not_a_number_is_the_loaders_type_message():
    data = m.with_value(m.as_dict(edge()), "wireguard.mtu", "big")
    assert m.check(data) == ["wireguard.mtu: must be an integer, not a string"]


def test_a_wrong_choice_and_a_bad_name():
    data = m.with_value(m.as_dict(edge()), "tuning.governor", "turbo")
    [line] = m.check(data)
    assert line.startswith("tuning.governor: ") and "performance" in line
    data = m.with_value(m.as_dict(edge()), "wan.interface", "eth 0")
    [line] = m.check(data)
    assert line.startswith("wan.interface: not an interface name")


def test_relations_name_the_other_key():
    data = m.with_value(m.as_dict(Config()), "wan.mode", "static")
    assert [line.split(":")[0] for line in m.check(data)] == ["wan.address", "wan.gateway"]
    data = m.with_value(data, "wan.address", "203.0.113.2/24")
    data = m.with_value(data, "wan.gateway", "203.0.113.1")
    assert m.check(data) == []
    back = m.with_value(data, "wan.address", "  ")  # empty: left out
    assert "address" not in back["wan"]


def test_lists_are_comma_separated():
    data = m.with_value(m.as_dict(edge()), "firewall.open_tcp", "22, 8080,")
    assert data["firewall"]["open_tcp"] == [22, 8080]
    assert m.check(data) == []
    assert parse_config(m.proposed_text(data)).config.firewall.open_tcp == (22, 8080)
    bad = m.with_value(data, "firewall.open_tcp", "22, http, 70000")
    assert m.check(bad) == ["firewall.open_tcp[1]: must be an integer, not a string",
                            "firewall.open_tcp[2]: outside 1-65535"]
    assert m.owner("firewall.open_tcp[1]", ["firewall.open_tcp", "firewall.open_udp"]) == \
        "firewall.open_tcp"
    empty = m.with_value(data, "wireguard.prefixes", "")
    assert empty["wireguard"]["prefixes"] == []


def test_switch_values():
    data = m.with_value(m.as_dict(edge()), "nat.masquerade_wan", False)
    assert data["nat"]["masquerade_wan"] is False
    data = m.with_value(data, "nat.masquerade_wan", "true")
    assert data["nat"]["masquerade_wan"] is True
    assert m.check(m.with_value(data, "nat.masquerade_wan", "maybe")) == [
        "nat.masquerade_wan: must be true or false, not a string"]


def test_peers_survive_the_round_trip():
    data = m.as_dict(edge())
    assert m.proposed_text(data) == to_toml(edge())


def test_the_diff_names_each_changed_key():
    old = to_toml(edge())
    data = m.with_value(m.as_dict(edge()), "wan.shaping.upload_kbit", "5000")
    data = m.with_value(data, "firewall.open_udp", "5353")
    new = m.proposed_text(data)
    assert m.diff(old, new) == ["-wan.shaping.upload_kbit = 4500",
                                "+wan.shaping.upload_kbit = 5000",
                                "-firewall.open_udp = []", "+firewall.open_udp = [5353]"]
    assert m.diff(old, old) == []
    assert m.changed_keys(EDGE.read_text(), new) == ["wan.shaping.upload_kbit",
                                                     "firewall.open_udp"]


def test_a_string_or_an_integer():
    path = "wan.shaping.overhead"
    data = m.as_dict(edge())
    assert m.check(m.with_value(data, path, "48")) == []
    assert m.with_value(data, path, "48")["wan"]["shaping"]["overhead"] == 48
    assert m.with_value(data, path, "pppoe-vdsl")["wan"]["shaping"]["overhead"] == "pppoe-vdsl"
    [line] = m.check(m.with_value(data, path, "999"))
    assert line.startswith("wan.shaping.overhead: ")
