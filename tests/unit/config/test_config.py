"""keel.toml: the shipped default and the examples load; every kind of bad
input names its key path and reason and never echoes a key; garbage never
crashes the loader and is never accepted."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from keel.config.errors import ConfigError
from keel.config.load import load_text
from keel.model import model_from_config

TOP = Path(__file__).resolve().parents[3]
DEFAULT = TOP / "overlay/etc/keel/keel.toml"
EXAMPLES = TOP / "tui/keel/config/examples"
KEY_A = "HlOu1tgN6jIPCqo/B9y+b7TT1bltyagEMGZGjSZNPVI="
KEY_B = "DGDJOoNeCQAxEAKW/6R/XQpwi4FNhdoJTo1LLorzzRg="


def problems(text: str) -> list[str]:
    with pytest.raises(ConfigError) as err:
        load_text(text, "t.toml")
    return [str(p) for p in err.value.problems]


def test_default_is_an_edge_router():
    model = model_from_config(load_text(DEFAULT.read_text()))
    (wan,) = model.wans
    assert (wan.interface, wan.dhcp) == ("eth0", True)
    assert model.lans[0].interface == "eth1" and model.lans[0].dhcp_start
    assert model.wireguard is None and model.nat.masquerade_wan
    assert wan.shaping.upload_kbit == wan.shaping.download_kbit == 0


@pytest.mark.parametrize("name", ["edge", "hub"])
def test_examples_load(name):
    model = model_from_config(load_text((EXAMPLES / f"{name}.toml").read_text()))
    assert model.wireguard is not None and model.wireguard.peer
    if name == "hub":
        assert not model.lans and model.selftest.iperf3_server
        assert model.firewall.forward_tunnel_to_wan
    else:
        assert model.wans[0].shaping.attach == "tunnel"


@pytest.mark.parametrize(("text", "expected"), [
    ("[wan]\nmode = 3\n", "wan.mode: must be a string, not an integer"),
    ("[wan]\nmode = 'pppoe'\n", "wan.mode: must be one of: dhcp, static"),
    ("[wan.shaping]\nupload_kbit = -1\n", "wan.shaping.upload_kbit: outside 0-100000000"),
    ("[wan]\ninterfce = 'eth0'\n", "wan.interfce: unknown key (did you mean 'interface'?)"),
    ("[wan]\ninterface = 'this-name-is-far-too-long'\n", "wan.interface: not an interface name"),
    ("[lan]\naddress = '192.168.1.1'\n", "lan.address: needs a prefix length"),
    ("[lan]\naddress = '10.0.0.1/24'\n", "lan.dhcp_start: not inside the LAN 10.0.0.0/24"),
    ("[wan]\nmode = 'static'\n", "wan.address: missing: mode is static"),
    ("[wireguard]\nenabled = true\naddress = ['10.7.0.1/24']\nlisten_port = 70000\n",
     "wireguard.listen_port: outside 1-65535"),
    ("[[wireguard.peer]]\npublic_key = 'abc'\nallowed_ips = ['10.0.0.0/24']\n",
     "wireguard.peer[0].public_key: invalid key: 3 characters, needs 44"),
    ("[[wireguard.peer]]\nallowed_ips = ['10.0.0.1/24']\npublic_key = '" + KEY_A + "'\n",
     "wireguard.peer[0].allowed_ips[0]: host bits set in a prefix"),
    ("[[wireguard.peer]]\npublic_key = '" + KEY_A + "'\n",
     "wireguard.peer[0].allowed_ips: missing (required)"),
    ("[wan.shaping]\noverhead = 'adsl'\n", "wan.shaping.overhead: must be a number of bytes"),
    ("wan = 5\n", "wan: must be a table, not an integer"),
    ("[wan\n", "TOML syntax error"),
])
def test_bad_input_names_the_key_and_the_reason(text, expected):
    assert any(p.startswith(expected) for p in problems(text)), problems(text)


def test_duplicate_and_overlapping_peers():
    text = ("[wireguard]\nenabled = true\naddress = ['10.7.0.1/24']\n"
            f"[[wireguard.peer]]\npublic_key = '{KEY_A}'\nallowed_ips = ['10.7.0.0/25']\n"
            f"[[wireguard.peer]]\npublic_key = '{KEY_A}'\nallowed_ips = ['10.7.0.2/32']\n")
    found = problems(text)
    assert "wireguard.peer[1].public_key: duplicate of wireguard.peer[0]" in found
    overlap = "wireguard.peer[1].allowed_ips[0]: overlaps 10.7.0.0/25"
    assert any(p.startswith(overlap) for p in found)


def test_all_problems_are_reported_at_once():
    assert len(problems("[wan]\nmode = 1\ninterface = 2\n[lan]\nbogus = 1\n")) == 3


def test_a_key_value_is_never_echoed():
    secret = "mJ1JYpGGd2ghT2bsyeZmoTpOG3C/a1j4KZl41LPf5l"  # a truncated private key
    text = f"[wireguard]\nprivate_key = '{secret}'\n[[wireguard.peer]]\npublic_key = '{secret}'\n"
    with pytest.raises(ConfigError) as err:
        load_text(text)
    assert secret not in str(err.value)
    assert "wireguard.private_key: unknown key" in str(err.value)


# --- property-based: garbage in, a clear error out ------------------------------
toml_scalars = st.one_of(st.integers(-10**6, 10**6), st.booleans(), st.text(max_size=30),
                         st.floats(allow_nan=False, allow_infinity=False))
toml_values = st.recursive(toml_scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=12), inner, max_size=4)),
    max_leaves=12)
KNOWN_PATHS = [("wan", "mode"), ("wan", "interface"), ("wan", "address"), ("lan", "address"),
               ("lan", "dhcp_start"), ("wireguard", "listen_port"), ("wireguard", "mtu"),
               ("wireguard", "address"), ("tuning", "governor"), ("firewall", "open_tcp"),
               ("system", "hostname")]


def _dump(value) -> str:
    """A tiny TOML writer for generated documents (inline values)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return '"' + value.encode("unicode_escape").decode().replace('"', '\\"') + '"'
    if isinstance(value, list):
        return "[" + ", ".join(_dump(v) for v in value) + "]"
    return "{" + ", ".join(f"{_dump(k)} = {_dump(v)}" for k, v in value.items()) + "}"


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(max_size=200))
def test_garbage_text_never_crashes(text):
    try:
        load_text(text)
    except ConfigError as err:
        assert err.problems


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(KNOWN_PATHS), toml_values)
def test_garbage_at_real_keys_is_rejected_or_valid(path, value):
    section, key = path
    text = f"[{section}]\n{key} = {_dump(value)}\n"
    try:
        tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return
    try:
        cfg = load_text(text)
    except ConfigError as err:
        assert err.problems and all(str(p) for p in err.problems)
        return
    # accepted: then the value really was valid for that key
    got = getattr(getattr(cfg, section), key)
    assert got == (tuple(value) if isinstance(value, list) else value)
    model_from_config(cfg)


@settings(max_examples=200, deadline=None)
@given(st.integers(), st.integers())
def test_out_of_range_numbers_are_never_accepted(port, mtu):
    text = (f"[wireguard]\nenabled = true\naddress = ['10.7.0.1/24']\n"
            f"listen_port = {port}\nmtu = {mtu}\n")
    valid = 1 <= port <= 65535 and 1280 <= mtu <= 9000
    try:
        load_text(text)
        assert valid
    except ConfigError:
        assert not valid


@pytest.mark.parametrize("text", ['[wan]\ninterface = "eth0\\n"\n',
                                  '[lan]\ndhcp_lease = "12h\\n"\n',
                                  '[system]\nhostname = "keel\\n"\n'])
def test_a_trailing_newline_never_slips_into_a_name(text):
    # a name ends up in ip/tc/nft command lines and in the ruleset
    assert problems(text)


def test_odd_keys_are_quoted_in_the_path():
    assert problems('"0\\n" = 1\n') == ['"0\\n": unknown key']
