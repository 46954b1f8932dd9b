"""keel.model: every key of the schema reaches the model, so a key that does
nothing cannot come back; the config in force is read in one place."""

from __future__ import annotations

import dataclasses
import typing
from collections.abc import Iterator
from typing import Any

import pytest

from keel.config import schema
from keel.model import model_from_config, reading

KEY = "HlOu1tgN6jIPCqo/B9y+b7TT1bltyagEMGZGjSZNPVI="

# keys read by something other than the model; each says by what
USED_ELSEWHERE: dict[str, str] = {}

# a config where every section is present, so that each key can show
BASE = schema.Config(
    lan=schema.Lan(),
    wireguard=schema.WireGuard(enabled=True, address=("10.77.0.2/24",), route="prefixes",
                               peer=(schema.Peer(public_key=KEY,
                                                 allowed_ips=("10.77.0.1/32",)),)),
    forward=(schema.Forward(name="web", port=8080, to="192.168.77.50:80"),),
)
# keys whose other value must still parse: a target, and a via this router knows
OTHER_VALUES: dict[str, Any] = {"forward[].to": "192.168.77.51", "forward[].via": "keel"}


def leaves(cls: type, prefix: str = "") -> Iterator[tuple[str, dataclasses.Field]]:
    """Every key of the schema, as its dotted path (arrays of tables as `[]`)."""
    hints = typing.get_type_hints(cls)
    for f in dataclasses.fields(cls):
        path = prefix + f.name
        inner = _table(hints[f.name])
        if inner is None:
            yield path, f
        else:
            yield from leaves(inner, path + ("[]." if _is_array(hints[f.name]) else "."))


def _is_array(hint: Any) -> bool:
    return typing.get_origin(hint) is tuple


def _table(hint: Any) -> type | None:
    for arg in (hint, *typing.get_args(hint)):
        if dataclasses.is_dataclass(arg):
            return arg  # type: ignore[return-value]
    return None


def other_value(value: Any, f: dataclasses.Field) -> Any:
    """A value of the key's kind unlike `value` (the model takes it as given)."""
    rule: schema.Rule = f.metadata["rule"]
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + 1
    if rule.choices:
        return next(c for c in rule.choices if c != value)
    if isinstance(value, tuple):
        return (*value, "10.99.0.0/24")
    return (value or "") + "x"


def with_leaf(obj: Any, path: list[str], change: Any) -> Any:
    name, rest = path[0], path[1:]
    if name.endswith("[]"):
        name = name[:-2]
        items = getattr(obj, name)
        return dataclasses.replace(obj, **{name: (with_leaf(items[0], rest, change),
                                                 *items[1:])})
    if not rest:
        return dataclasses.replace(obj, **{name: change(getattr(obj, name))})
    return dataclasses.replace(obj, **{name: with_leaf(getattr(obj, name), rest, change)})


ALL_LEAVES = list(leaves(schema.Config))


def test_the_walk_finds_the_schema():
    paths = [p for p, _f in ALL_LEAVES]
    assert "wan.shaping.overhead" in paths and "wireguard.peer[].keepalive" in paths
    assert "lan.dhcp_lease" in paths and "selftest.iperf3_server" in paths
    assert set(USED_ELSEWHERE) <= set(paths)


@pytest.mark.parametrize(("path", "f"), ALL_LEAVES, ids=[p for p, _f in ALL_LEAVES])
def test_every_key_reaches_the_model(path, f):
    if path in USED_ELSEWHERE:
        pytest.skip(USED_ELSEWHERE[path])
    changed = with_leaf(BASE, path.split("."),
                        lambda v: OTHER_VALUES.get(path, other_value(v, f)))
    assert changed != BASE, path
    assert model_from_config(changed) != model_from_config(BASE), f"{path} does nothing"


def test_the_config_in_force_is_the_users_else_the_default(tmp_path):
    user, default = tmp_path / "user.toml", tmp_path / "default.toml"
    default.write_text('[system]\nhostname = "shipped"\n')
    assert reading.config_in_force(user, default) == default
    user.write_text('[system]\nhostname = "mine"\n')
    assert reading.config_in_force(user, default) == user
    assert reading.read_model(user).system.hostname == "mine"
    user.write_text("[system]\nhostname = 3\n")
    with pytest.raises(reading.InvalidConfig):
        reading.read_model(user)
