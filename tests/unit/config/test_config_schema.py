"""The schema is declarative and complete; the shipped default and both
examples load; a Config written back as TOML loads to the same Config."""

from __future__ import annotations

import dataclasses
import tomllib
from pathlib import Path

import pytest

from keel.config import paths
from keel.config.checks import SYNTAXES, by_rule
from keel.config.describe import walk
from keel.config.dump import to_toml, toml_string
from keel.config.load import load_file, load_text
from keel.config.relations import cross_checks
from keel.config.schema import OVERHEAD_PRESETS, Config, Rule

TOP = Path(__file__).resolve().parents[3]
DEFAULT = TOP / "overlay/etc/keel/keel.toml"
EXAMPLES = TOP / "tui/keel/config/examples"
SHIPPED = [DEFAULT, EXAMPLES / "edge.toml", EXAMPLES / "hub.toml"]


def test_every_key_is_described_and_its_rule_is_well_formed():
    keys = list(walk())
    assert len(keys) > 40
    for info in keys:
        assert info.doc, info.path
        for rule in (info.rule, info.item):
            if rule is None:
                continue
            assert isinstance(rule, Rule)
            assert rule.syntax is None or rule.syntax in SYNTAXES, info.path
            assert (rule.low is None) == (rule.high is None), info.path
            if rule.low is not None:
                assert rule.low <= rule.high


def test_every_default_obeys_its_own_rule():
    for info in walk():
        if info.is_table or info.default is None:
            continue
        values = info.default if isinstance(info.default, tuple) else (info.default,)
        rule = info.item if isinstance(info.default, tuple) else info.rule
        for value in values:
            assert by_rule(rule or Rule(), value) is None, info.path


def test_the_empty_file_is_a_valid_config_of_defaults():
    assert load_text("") == Config()
    assert cross_checks(Config()) == []


def test_the_schema_reads_as_documentation():
    by_path = {info.path: info for info in walk()}
    assert by_path["wan.shaping.download_kbit"].allowed == "0..100000000 kbit/s"
    assert by_path["wireguard.mtu"].default == 1420
    assert by_path["wireguard.peer[].public_key"].required
    assert by_path["firewall.open_tcp"].type == "array of integers"
    assert by_path["firewall.open_tcp"].allowed == "each: 1..65535; at most 1024"
    assert by_path["wan.shaping.overhead"].type == "string or integer"
    assert "docsis" in by_path["wan.shaping.overhead"].allowed
    assert by_path["lan"].type == "table" and by_path["wireguard.peer"].type == "array of tables"


def test_overhead_presets_follow_the_reference():
    assert OVERHEAD_PRESETS["ethernet"] == 38
    assert OVERHEAD_PRESETS["docsis"] == 18
    assert OVERHEAD_PRESETS["pppoe-vdsl"] == 34


def test_shipped_default_is_an_edge_router_on_first_boot():
    cfg = load_file(DEFAULT)
    assert (cfg.wan.interface, cfg.wan.mode) == ("eth0", "dhcp")
    assert cfg.lan is not None and cfg.lan.interface == "eth1"
    assert cfg.lan.address == "192.168.77.1/24" and cfg.lan.dhcp_start and cfg.lan.dhcp_end
    assert cfg.wan.shaping.download_kbit == cfg.wan.shaping.upload_kbit == 0
    assert not cfg.wireguard.enabled and cfg.wireguard.peer == ()
    assert cfg.wireguard.mtu == 1420
    assert not cfg.firewall.ssh_on_wan and cfg.firewall.open_tcp == ()
    assert cfg.nat.masquerade_wan


def test_the_default_is_the_schema_default_spelled_out():
    """The shipped file documents the defaults; it must not drift from them."""
    cfg = load_file(DEFAULT)
    assert dataclasses.replace(cfg, lan=None) == Config()


def test_edge_example():
    cfg = load_text(paths.example_text("edge"))
    assert cfg.lan is not None and cfg.wireguard.enabled
    (peer,) = cfg.wireguard.peer
    assert peer.endpoint and peer.keepalive == 25
    assert cfg.wireguard.route == "prefixes" and cfg.wan.shaping.download_kbit > 0


def test_hub_example():
    cfg = load_text(paths.example_text("hub"))
    assert cfg.lan is None and cfg.wan.mode == "static"
    assert cfg.wireguard.enabled and cfg.wireguard.peer[0].endpoint is None
    assert cfg.selftest.iperf3_server and cfg.firewall.forward_tunnel_to_wan
    assert cfg.nat.masquerade_wan


def test_examples_files_are_what_the_package_ships():
    for name in paths.EXAMPLES:
        assert paths.example_text(name) == (EXAMPLES / f"{name}.toml").read_text()
    with pytest.raises(ValueError):
        paths.example_text("nope")


def test_pyproject_ships_the_examples():
    assert '"config/examples/*.toml"' in (TOP / "tui/pyproject.toml").read_text()


def test_the_users_copy_wins_when_it_exists(tmp_path):
    default, user = tmp_path / "default.toml", tmp_path / "user.toml"
    assert paths.in_force(default, user) == default
    user.write_text("")
    assert paths.in_force(default, user) == user
    assert str(paths.DEFAULT) == "/etc/keel/keel.toml"
    assert str(paths.USER) == "/data/keel/keel.toml"


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.name)
def test_round_trip(path):
    cfg = load_file(path)
    text = to_toml(cfg)
    assert load_text(text) == cfg
    assert to_toml(load_text(text)) == text


def _without_none(value):
    if isinstance(value, dict):
        return {k: _without_none(v) for k, v in value.items() if v is not None}
    if isinstance(value, (list, tuple)):
        return [_without_none(v) for v in value]
    return value


@pytest.mark.parametrize("name", paths.EXAMPLES)
def test_show_spells_out_every_key_in_force(name):
    cfg = load_text(paths.example_text(name))
    written = tomllib.loads(to_toml(cfg))
    expected = _without_none(dataclasses.asdict(cfg))
    if not cfg.wireguard.peer:
        del expected["wireguard"]["peer"]
    if not cfg.forward:
        del expected["forward"]  # no [[forward]] table: written as nothing, like peers
    assert written == expected


def test_toml_strings_are_escaped():
    assert toml_string('a"b\\c\n\x7f') == '"a\\"b\\\\c\\n\\u007f"'
