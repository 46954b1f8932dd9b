"""Every list a config can grow is bounded in the schema (Rule.most), with a
message naming the bound; 10,000 [[forward]] tables once loaded (1.4 s).
The bounds keep real routers working: a hub of 3000 peers (the benchmark,
README) loads, and so does every bound at its limit."""

from __future__ import annotations

import base64
import hashlib
import time

import pytest

from keel.config import describe, schema
from keel.config.errors import ConfigError
from keel.config.load import load_text
from tests.unit.config.test_forwards import HUB


def problems(text: str) -> list[str]:
    with pytest.raises(ConfigError) as err:
        load_text(text, "t.toml")
    return [str(p) for p in err.value.problems]


def test_every_array_of_the_schema_has_a_bound():
    arrays = [k for k in describe.walk() if k.type.startswith("array")]
    assert len(arrays) >= 8
    unbounded = [k.path for k in arrays if k.rule.most is None]
    assert unbounded == []
    for k in arrays:
        assert f"at most {k.rule.most}" in k.allowed, k.path


def forwards(count: int) -> str:
    return "".join(f'\n[[forward]]\nname = "f{i}"\nport = {10000 + i}\n'
                   f'to = "192.168.77.50"\nvia = "edge"\n' for i in range(count))


def test_ten_thousand_forwards_are_refused_at_once_naming_the_bound():
    text = HUB + forwards(10_000)
    began = time.process_time()
    assert problems(text) == [f"forward: 10000 tables: at most {schema.MAX_FORWARDS}"]
    assert time.process_time() - began < 2.0  # no check of each (it took 1.4 s to load them)


def test_the_bound_of_forwards_loads():
    assert len(load_text(HUB + forwards(schema.MAX_FORWARDS)).forward) == schema.MAX_FORWARDS


def key(n: int) -> str:
    return base64.b64encode(hashlib.sha256(f"peer {n}".encode()).digest()).decode()


def hub(peers: int) -> str:
    """bench.config_validation's hub: a /32 in the tunnel and a /24 behind each."""
    return ('[wireguard]\nenabled = true\naddress = ["10.64.0.1/16"]\n' + "".join(
        f'\n[[wireguard.peer]]\npublic_key = "{key(n)}"\nallowed_ips = ["10.64.{(n + 2) // 256}.'
        f'{(n + 2) % 256}/32", "172.{16 + n // 256}.{n % 256}.0/24"]\n' for n in range(peers)))


def test_a_hub_of_3000_peers_loads_and_one_over_the_bound_is_refused():
    assert len(load_text(hub(3000)).wireguard.peer) == 3000
    assert problems(hub(schema.MAX_PEERS + 1)) == [
        f"wireguard.peer: {schema.MAX_PEERS + 1} tables: at most {schema.MAX_PEERS}"]


@pytest.mark.parametrize(("section", "name", "bound", "value"), [
    ("firewall", "open_tcp", schema.MAX_OPEN_PORTS, "{n}"),
    ("firewall", "open_udp", schema.MAX_OPEN_PORTS, "{n}"),
    ("wireguard", "prefixes", schema.MAX_PREFIXES, '"10.{a}.{b}.0/24"'),
    ("wireguard", "address", schema.MAX_TUNNEL_ADDRESSES, '"10.{b}.0.1/24"'),
])
def test_a_list_one_over_its_bound_is_refused_naming_it(section, name, bound, value):
    def items(count: int) -> str:
        return ", ".join(value.format(n=1 + n % 65535, a=n // 256, b=n % 256)
                         for n in range(count))
    text = f"[{section}]\n{name} = [{items(bound + 1)}]\n"
    assert f"{section}.{name}: {bound + 1} elements: at most {bound}" in problems(text)


def test_ssh_keys_and_allowed_ips_are_bounded():
    line = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl"
    text = f"[access]\nssh_keys = [{', '.join([repr(line)] * (schema.MAX_SSH_KEYS + 1))}]\n"
    assert problems(text) == [f"access.ssh_keys: {schema.MAX_SSH_KEYS + 1} elements: at most "
                              f"{schema.MAX_SSH_KEYS}"]
    nets = ", ".join(f'"10.{n // 256}.{n % 256}.0/24"' for n in range(schema.MAX_ALLOWED_IPS + 1))
    text = f'[[wireguard.peer]]\npublic_key = "{key(1)}"\nallowed_ips = [{nets}]\n'
    assert problems(text) == [f"wireguard.peer[0].allowed_ips: {schema.MAX_ALLOWED_IPS + 1} "
                              f"elements: at most {schema.MAX_ALLOWED_IPS}"]
