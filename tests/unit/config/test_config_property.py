"""Property tests: garbage thrown at the loader never crashes it (the only
exception is ConfigError, naming a key path and a reason) and is never
accepted; a mutation that makes one key invalid is rejected at that key."""

from __future__ import annotations

import base64
import copy
import ipaddress
import math
import re
import tomllib
from typing import Any

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from keel.config import paths
from keel.config.describe import KeyInfo, walk
from keel.config.dump import to_toml, toml_string
from keel.config.errors import ConfigError
from keel.config.load import load_text
from keel.config.prescan import MAX_INT_DIGITS
from keel.config.schema import Config, Rule

FAST = settings(max_examples=300, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
KEYS = {info.path: info for info in walk()}
LEAVES = sorted(p for p, info in KEYS.items() if not info.is_table)
TABLES = sorted(p for p, info in KEYS.items() if info.type == "table")
NAMES = sorted({info.name for info in KEYS.values()})
BASE = tomllib.loads(paths.example_text("edge"))  # every section, one peer

# --- a TOML writer for generated documents (inline tables) --------------------


def toml(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf") if math.isinf(
            value) else repr(value)
    if isinstance(value, str):
        return toml_string(value)
    if isinstance(value, list):
        return "[" + ", ".join(toml(v) for v in value) + "]"
    return "{" + ", ".join(f"{toml_string(k)} = {toml(v)}" for k, v in value.items()) + "}"


def document(data: dict[str, Any]) -> str:
    return "".join(f"{toml_string(k)} = {toml(v)}\n" for k, v in data.items())


def load(data: dict[str, Any]) -> Config | ConfigError:
    """load_text of a generated document: a Config or a ConfigError, nothing else."""
    text = document(data)
    assert tomllib.loads(text) == data or _has_nan(data)
    try:
        return load_text(text, "gen.toml")
    except ConfigError as err:
        assert err.problems
        for problem in err.problems:
            assert problem.reason and "\n" not in str(problem)
        return err


def _has_nan(value: Any) -> bool:
    if isinstance(value, float):
        return math.isnan(value)
    if isinstance(value, dict):
        return any(_has_nan(v) for v in value.values())
    if isinstance(value, list):
        return any(_has_nan(v) for v in value)
    return False


def _has_huge_int(value: Any) -> bool:
    if isinstance(value, int) and not isinstance(value, bool):
        return len(str(abs(value))) > MAX_INT_DIGITS
    if isinstance(value, dict):
        return any(_has_huge_int(v) for v in value.values())
    if isinstance(value, list):
        return any(_has_huge_int(v) for v in value)
    return False


def rejected_at(result: ConfigError, shown: str, value: Any) -> bool:
    """A problem names the key (or an element of it); an integer too long to
    parse is refused before parsing, by its line."""
    if any(p.path == shown or p.path.startswith(shown + "[") for p in result.problems):
        return True
    return _has_huge_int(value) and any(
        re.fullmatch(r"line \d+: an integer of \d+ digits \(at most \d+\)", p.reason)
        for p in result.problems)


# --- strategies ---------------------------------------------------------------
names = st.one_of(st.sampled_from(NAMES), st.text(max_size=12))
scalars = st.one_of(st.integers(-(2**63), 2**63 - 1), st.booleans(), st.text(max_size=20),
                    st.floats())
values = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(names, inner, max_size=3)), max_leaves=8)
keys32 = st.binary(min_size=32, max_size=32).map(lambda b: base64.b64encode(b).decode())
ifnames = st.text(st.characters(codec="ascii"), min_size=0, max_size=18)
addresses = st.ip_addresses().map(str)
# a NIC by name or by what it is: mac: and pci: with values near the edge
_hexes = st.text("0123456789abcdefABCDEFg", min_size=1, max_size=3)
nic_specs = st.one_of(
    ifnames,
    st.lists(_hexes, min_size=5, max_size=7).map(lambda p: "mac:" + ":".join(p)),
    st.tuples(_hexes, _hexes, _hexes, st.integers(0, 9)).map(
        lambda t: f"pci:{t[0]}:{t[1]}:{t[2]}.{t[3]}"),
    st.tuples(st.sampled_from(["mac", "pci", "usb", "MAC", ""]), ifnames).map(
        lambda t: f"{t[0]}:{t[1]}"))
networks = st.one_of(st.ip_addresses(v=4).flatmap(lambda a: st.integers(0, 32).map(
    lambda n: f"{a}/{n}")), st.ip_addresses(v=6).flatmap(lambda a: st.integers(0, 128).map(
        lambda n: f"{a}/{n}")))
endpoints = st.one_of(
    st.tuples(st.from_regex(r"[a-z0-9.-]{0,20}", fullmatch=True), st.integers(-1, 70000)
              ).map(lambda t: f"{t[0]}:{t[1]}"),
    st.tuples(st.ip_addresses(), st.integers(0, 70000)).map(
        lambda t: f"[{t[0]}]:{t[1]}" if t[0].version == 6 else f"{t[0]}:{t[1]}"))
port_ranges = st.one_of(
    st.integers(-3, 70000), st.from_regex(r"[0-9+ -]{0,12}", fullmatch=True),
    st.tuples(st.integers(-1, 70000), st.integers(-1, 70000)).map(lambda t: f"{t[0]}-{t[1]}"))
networks6 = st.one_of(
    st.ip_addresses(v=6).flatmap(lambda a: st.integers(0, 128).map(lambda n: f"{a}/{n}")),
    st.tuples(st.integers(0, 2**64 - 1), st.integers(0, 2**64 - 1)).map(
        lambda t: f"{ipaddress.IPv6Address((0x2001_0db8 << 96) | (t[0] << 64) | t[1])}/64"),
    st.integers(32, 64).flatmap(lambda n: st.integers(0, 2**(n - 16) - 1).map(
        lambda v: str(ipaddress.IPv6Network(((0xfd00 << 112) | (v << (128 - n)), n))))))
targets = st.one_of(
    addresses, endpoints,
    st.tuples(st.ip_addresses(v=4), st.integers(-1, 70000)).map(lambda t: f"{t[0]}:{t[1]}"))
BY_SYNTAX = {"ifname": ifnames, "ifname_or_identity": nic_specs, "hostname": ifnames,
             "address": addresses,
             "prefix": networks, "interface_address": networks, "wg_key": keys32,
             "interface_address6": networks6, "prefix6": networks6,
             "endpoint": endpoints, "lease": st.from_regex(r"\d{0,4}[smhdwx]?", fullmatch=True),
             "ssh_public_key": st.tuples(
                 st.sampled_from(["ssh-ed25519", "ssh-rsa", "ssh-dss", ""]),
                 st.binary(max_size=60), st.text(max_size=10)).map(
                     lambda t: f"{t[0]} {base64.b64encode(ssh_blob(t[0], t[1])).decode()} "
                               f"{t[2]}"),
             "port_range": port_ranges, "forward_target": targets}


def ssh_blob(kind: str, data: bytes) -> bytes:
    """A key blob naming `kind` (sometimes cut short)."""
    name = kind.encode()
    return (len(name).to_bytes(4, "big") + name + data)[:len(data) + 4 + len(name)]


def plausible(rule: Rule | None) -> st.SearchStrategy[Any]:
    """Values near the rule's edge: mostly of the right type, often invalid."""
    rule = rule or Rule()
    options = [values]
    if rule.low is not None and rule.high is not None:
        options.append(st.integers(rule.low - 3, rule.high + 3))
    if rule.choices:
        options.append(st.sampled_from(rule.choices))
        options.append(st.sampled_from(rule.choices).map(str.upper))
    if rule.syntax:
        options.append(BY_SYNTAX[rule.syntax])
    return st.one_of(*options)


def value_for(info: KeyInfo) -> st.SearchStrategy[Any]:
    if info.type.startswith("array of"):
        return st.one_of(values, st.lists(plausible(info.item), max_size=3))
    return plausible(info.rule)


# --- an independent oracle of what one key accepts ---------------------------


def _typed(kind: str, value: Any) -> bool:
    return {"string": isinstance(value, str),
            "integer": isinstance(value, int) and not isinstance(value, bool),
            "boolean": isinstance(value, bool)}[kind]


def _obeys(rule: Rule, value: Any) -> bool:
    if isinstance(value, int) and not isinstance(value, bool):
        return rule.low is None or rule.low <= value <= rule.high
    if rule.choices:
        return value in rule.choices
    if rule.syntax == "ifname":
        return (0 < len(value.encode()) <= 15 and value not in (".", "..")
                and not any(c in "/:" or c.isspace() for c in value))
    if rule.syntax == "ifname_or_identity":
        if value.startswith("mac:"):
            return bool(re.fullmatch(r"(?:[0-9a-fA-F]{2}:){5}[0-9a-fA-F]{2}", value[4:])) \
                and int(value[4:].replace(":", ""), 16) != 0
        if value.startswith("pci:"):
            return bool(re.fullmatch(r"(?:[0-9a-fA-F]{4,8}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]",
                                     value[4:]))
        return _obeys(Rule(syntax="ifname"), value)
    if rule.syntax == "wg_key":
        try:
            return len(value) == 44 and len(base64.b64decode(value, validate=True)) == 32
        except ValueError:
            return False
    if rule.syntax in ("address", "prefix", "interface_address"):
        parse = {"address": ipaddress.ip_address, "interface_address": ipaddress.ip_interface,
                 "prefix": ipaddress.ip_network}[rule.syntax]
        try:
            parse(value)
        except ValueError:
            return False
        return rule.syntax != "interface_address" or "/" in value
    if rule.syntax in ("interface_address6", "prefix6"):
        try:
            net = (ipaddress.ip_interface(value).network if rule.syntax == "interface_address6"
                   else ipaddress.ip_network(value))
        except ValueError:
            return False
        low = 64 if rule.syntax == "interface_address6" else 32
        return net.version == 6 and low <= net.prefixlen <= 64
    return True  # other syntaxes: not judged here


def valid_alone(info: KeyInfo, value: Any) -> bool:
    """Would this value pass its own key's type and rule? (False = surely not.)"""
    if info.type.startswith("array of"):
        kind = info.type.removeprefix("array of ").removesuffix("s")
        return isinstance(value, list) and all(
            _typed(kind, v) and _obeys(info.item or Rule(), v) for v in value)
    kinds = info.type.split(" or ")
    return any(_typed(k, value) for k in kinds) and _obeys(info.rule, value)


def place(path: str, value: Any) -> tuple[dict[str, Any], str]:
    """BASE with value put at a schema path; the path as the loader names it."""
    data = copy.deepcopy(BASE)
    parts = path.split(".")
    node = data
    for part in parts[:-1]:
        if part.endswith("[]"):
            node = node.setdefault(part[:-2], [{}])[0]
        else:
            node = node.setdefault(part, {})
    node[parts[-1]] = value
    return data, path.replace("[]", "[0]")


def get(cfg: Config, path: str) -> Any:
    node: Any = cfg
    for part in path.split("."):
        node = getattr(node, part[:-2])[0] if part.endswith("[]") else getattr(node, part)
    return node


def as_loaded(value: Any) -> Any:
    return tuple(value) if isinstance(value, list) else value


# --- the properties -------------------------------------------------------------


@FAST
@given(st.text(max_size=300))
def test_garbage_text_is_a_config_or_a_config_error(text):
    try:
        cfg = load_text(text, "gen.toml")
    except ConfigError as err:
        assert err.problems and all(p.reason for p in err.problems)
        assert str(err).startswith("gen.toml: ")
    else:
        assert isinstance(cfg, Config)


@FAST
@given(st.dictionaries(names, values, max_size=6))
def test_garbage_documents_are_a_config_or_a_config_error(data):
    result = load(data)
    if isinstance(result, Config):
        # only known sections, and the same Config again when written back
        assert load_text(to_toml(result)) == result


@FAST
@given(st.sampled_from(TABLES), st.dictionaries(names, values, min_size=1, max_size=4))
def test_garbage_tables_at_real_sections(table, garbage):
    data, _ = place(table, garbage)
    result = load(data)
    if isinstance(result, Config):
        assert set(garbage) <= {info.name for p, info in KEYS.items()
                                if p.startswith(table + ".")}


@FAST
@given(st.sampled_from(LEAVES).flatmap(lambda p: st.tuples(st.just(p), value_for(KEYS[p]))))
def test_garbage_values_at_real_keys_are_rejected_unless_valid(case):
    path, value = case
    data, shown = place(path, value)
    result = load(data)
    if not valid_alone(KEYS[path], value):
        assert isinstance(result, ConfigError), (path, value)
        assert rejected_at(result, shown, value)
    elif isinstance(result, Config):
        assert get(result, path) == as_loaded(value)
        assert load_text(to_toml(result)) == result  # round trip


def _invalid(info: KeyInfo) -> st.SearchStrategy[Any]:
    """Values that break one key for sure."""
    wrong_type = {"string": st.one_of(st.integers(), st.booleans(), st.lists(st.text())),
                  "integer": st.one_of(st.text(), st.booleans(), st.floats()),
                  "boolean": st.one_of(st.integers(), st.text(), st.floats()),
                  "string or integer": st.one_of(st.booleans(), st.floats(),
                                                 st.lists(st.integers()))}
    kind = info.type
    if kind.startswith("array of"):
        element = _invalid(KeyInfo(info.path, kind.removeprefix("array of ").removesuffix("s"),
                                   None, False, "", info.item or Rule(), None))
        return st.one_of(st.text(), st.integers(), st.lists(element, min_size=1, max_size=3))
    options = [wrong_type[kind]]
    rule = info.rule
    if rule.low is not None and rule.high is not None:
        options += [st.integers(max_value=rule.low - 1), st.integers(min_value=rule.high + 1)]
    if rule.choices:
        options.append(st.text(max_size=12).filter(lambda t: t not in rule.choices))
    if rule.syntax in ("address", "prefix", "interface_address", "wg_key",
                       "interface_address6", "prefix6"):
        options.append(st.text(st.characters(codec="ascii"), max_size=6))
    if rule.syntax in ("ifname", "ifname_or_identity"):
        options.append(st.text(st.characters(codec="ascii"), min_size=16, max_size=30)
                       .filter(lambda t: ":" not in t))
    return st.one_of(*options)


@FAST
@given(st.sampled_from(LEAVES).flatmap(lambda p: st.tuples(st.just(p), _invalid(KEYS[p]))))
def test_a_mutation_that_breaks_one_key_is_rejected_at_that_key(case):
    path, value = case
    assume(not valid_alone(KEYS[path], value))
    data, shown = place(path, value)
    result = load(data)
    assert isinstance(result, ConfigError), (path, value)
    assert rejected_at(result, shown, value)


@FAST
@given(st.sampled_from(["", *TABLES, "wireguard.peer[]"]), st.text(min_size=1, max_size=20))
def test_an_unknown_key_is_rejected_by_name(table, name):
    assume(name not in {info.name for p, info in KEYS.items()
                        if p.rpartition(".")[0] == table})
    if table:
        data, _ = place(f"{table}.{name}", 1)
    else:
        data = {**copy.deepcopy(BASE), name: 1}
    result = load(data)
    assert isinstance(result, ConfigError)
    assert any("unknown key" in p.reason for p in result.problems)


secret_names = st.sampled_from(["private_key", "PrivateKey", "preshared_key", "secret",
                                "psk", "client_secret"])
secret_values = st.text(st.characters(codec="ascii", categories=["L", "N"]),
                        min_size=12, max_size=44)


@FAST
@given(st.sampled_from(["", *TABLES, "wireguard.peer[]"]), secret_names, secret_values,
       st.sampled_from(LEAVES), values)
def test_secret_values_are_never_echoed(table, name, secret, other_path, other_value):
    data, _ = place(other_path, other_value)
    if table:
        node = data
        for part in table.split("."):
            node = node[part[:-2]][0] if part.endswith("[]") else node.setdefault(part, {})
        node[name] = secret
    else:
        data[name] = secret
    result = load(data)
    assert isinstance(result, ConfigError)
    assert secret not in str(result)
