"""Every kind of bad input names its key path and the reason, all problems at
once, never echoing a secret; `keel config check` prints them and exits 2."""

from __future__ import annotations

import pytest

from keel.config import paths
from keel.config.errors import ConfigError, Problem
from keel.config.load import load_file, load_text
from tests.unit.config.config_cli import run_config as _run

KEY_A = "HlOu1tgN6jIPCqo/B9y+b7TT1bltyagEMGZGjSZNPVI="
KEY_B = "DGDJOoNeCQAxEAKW/6R/XQpwi4FNhdoJTo1LLorzzRg="
WG = "[wireguard]\nenabled = true\naddress = ['10.7.0.1/24']\n"


def peer(key: str = KEY_A, allowed: str = "'10.7.0.2/32'", extra: str = "") -> str:
    return f"[[wireguard.peer]]\npublic_key = '{key}'\nallowed_ips = [{allowed}]\n{extra}"


def problems(text: str) -> list[str]:
    with pytest.raises(ConfigError) as err:
        load_text(text, "t.toml")
    assert all(isinstance(p, Problem) for p in err.value.problems)
    return [str(p) for p in err.value.problems]


def one(text: str) -> str:
    found = problems(text)
    assert len(found) == 1, found
    return found[0]


@pytest.mark.parametrize(("text", "expected"), [
    # wrong type
    ("[wan]\nmode = 3\n", "wan.mode: must be a string, not an integer"),
    ("[wan.shaping]\nnat = 'yes'\n", "wan.shaping.nat: must be true or false, not a string"),
    ("[wan.shaping]\nupload_kbit = 1.5\n",
     "wan.shaping.upload_kbit: must be an integer, not a number"),
    ("[wan.shaping]\nupload_kbit = true\n",
     "wan.shaping.upload_kbit: must be an integer, not true or false"),
    ("[wireguard]\naddress = '10.0.0.1/24'\n", "wireguard.address: must be an array, not a string"),
    ("[firewall]\nopen_tcp = [22, '80']\n",
     "firewall.open_tcp[1]: must be an integer, not a string"),
    ("wan = 5\n", "wan: must be a table, not an integer"),
    ("[wireguard]\npeer = 1\n", "wireguard.peer: must be an array, not an integer"),
    ("wireguard.peer = [1]\n", "wireguard.peer[0]: must be a table, not an integer"),
    ("[system]\nhostname = 1979-05-27\n", "system.hostname: must be a string, not a date or time"),
    # out of range
    ("[wan.shaping]\nupload_kbit = -1\n", "wan.shaping.upload_kbit: outside 0-100000000 kbit/s"),
    ("[wan.shaping]\ndownload_kbit = 100000001\n",
     "wan.shaping.download_kbit: outside 0-100000000"),
    ("[wireguard]\nlisten_port = 0\n", "wireguard.listen_port: outside 1-65535"),
    ("[wireguard]\nlisten_port = 65536\n", "wireguard.listen_port: outside 1-65535"),
    ("[wireguard]\nmtu = 1279\n", "wireguard.mtu: outside 1280-9000 bytes"),
    ("[wireguard]\nmtu = 9001\n", "wireguard.mtu: outside 1280-9000 bytes"),
    ("[firewall]\nopen_udp = [70000]\n", "firewall.open_udp[0]: outside 1-65535"),
    ("[tuning]\nmax_cstate_latency_us = -1\n", "tuning.max_cstate_latency_us: outside 0-100000 us"),
    ("[wan.shaping]\noverhead = 257\n", "wan.shaping.overhead: outside -64..256 bytes"),
    ("[wan.shaping]\noverhead = -65\n", "wan.shaping.overhead: outside -64..256 bytes"),
    (peer(extra="keepalive = 65536\n"), "wireguard.peer[0].keepalive: outside 0-65535 s"),
    # allowed values
    ("[wan]\nmode = 'pppoe'\n", "wan.mode: must be one of: dhcp, static"),
    ("[wan.shaping]\noverhead = 'adsl'\n",
     "wan.shaping.overhead: must be a number of bytes (-64..256) or one of: none,"),
    ("[wan.shaping]\ndiffserv = 'diffserv5'\n",
     "wan.shaping.diffserv: must be one of: besteffort,"),
    ("[tuning]\ngovernor = 'turbo'\n", "tuning.governor: must be one of: performance,"),
    ("[wireguard]\nroute = 'some'\n", "wireguard.route: must be one of: none, all, prefixes"),
    # unknown keys, with the closest known key
    ("[wan]\ninterfce = 'eth0'\n", "wan.interfce: unknown key (did you mean 'interface'?)"),
    ("[wan]\ndownload_kbit = 1000\n",
     "wan.download_kbit: unknown key (did you mean 'wan.shaping.download_kbit'?)"),
    ("[shaping]\n", "shaping: unknown key (did you mean 'wan.shaping'?)"),
    ("[tunnel]\n", "tunnel: unknown key"),
    ("[wan]\n'odd key' = 1\n", 'wan."odd key": unknown key'),
    (peer(extra="persistent_keepalive = 25\n"),
     "wireguard.peer[0].persistent_keepalive: unknown key (did you mean 'keepalive'?)"),
    # interface names (IFNAMSIZ)
    ("[wan]\ninterface = 'this-name-is-16c'\n",
     "wan.interface: not an interface name: longer than 15"),
    ("[wan]\ninterface = ''\n", "wan.interface: not an interface name: empty"),
    ("[lan]\ninterface = 'eth/1'\n",
     "lan.interface: not an interface name: '/', ':' and white space"),
    ("[lan]\ninterface = 'eth 1'\n",
     "lan.interface: not an interface name: '/', ':' and white space"),
    ("[lan]\ninterface = 'eth0:1'\n",
     "lan.interface: not an interface name: '/', ':' and white space"),
    ("[wireguard]\ninterface = '..'\n", "wireguard.interface: not an interface name: '.' and '..'"),
    ("[wireguard]\ninterface = 'wg\"0'\n",
     "wireguard.interface: not an interface name: use letters"),
    ("[system]\nhostname = '-keel'\n", "system.hostname: not a host name"),
    # addresses and prefixes
    ("[lan]\naddress = '192.168.1.1'\n", "lan.address: needs a prefix length"),
    ("[lan]\naddress = '192.168.1.300/24'\n", "lan.address: not an address with a prefix length"),
    ("[lan]\naddress = '192.168.1.0/24'\n", "lan.address: is the network's own address"),
    ("[lan]\naddress = '192.168.1.255/24'\n", "lan.address: is the broadcast address"),
    ("[lan]\ndhcp_start = '192.168.77'\n", "lan.dhcp_start: not an IP address"),
    ("[wan]\nmode = 'static'\naddress = '203.0.113.2/24'\ngateway = 'gw'\n",
     "wan.gateway: not an IP address"),
    (peer(allowed="'10.7.0.1/24'"), "wireguard.peer[0].allowed_ips[0]: host bits set in a prefix"),
    (peer(allowed="'10.7.0.0/33'"), "wireguard.peer[0].allowed_ips[0]: not an IP prefix"),
    (WG + "route = 'prefixes'\nprefixes = ['fd00::/129']\n",
     "wireguard.prefixes[0]: not an IP prefix"),
    ("[wireguard]\naddress = ['10.7.0.1']\n", "wireguard.address[0]: needs a prefix length"),
    # WireGuard keys: base64 of 32 bytes; the length named when it is wrong
    (peer(key="abc"), "wireguard.peer[0].public_key: invalid key: 3 characters, needs 44"),
    (peer(key=KEY_A[:-1]), "wireguard.peer[0].public_key: invalid key: 43 characters, needs 44"),
    (peer(key="A" * 43 + "=AAAA"),
     "wireguard.peer[0].public_key: invalid key: 48 characters, needs 44"),
    (peer(key="!" * 44), "wireguard.peer[0].public_key: invalid key: not base64"),
    (peer(key=KEY_A[:-2] + "=="), "wireguard.peer[0].public_key: invalid key: 31 bytes, needs 32"),
    (peer(key=KEY_A[:-4] + "===="),
     "wireguard.peer[0].public_key: invalid key: 30 bytes, needs 32"),
    (peer(key="A" * 44), "wireguard.peer[0].public_key: invalid key: 33 bytes, needs 32"),
    (peer(key="AAAA"), "wireguard.peer[0].public_key: invalid key: 4 characters, needs 44"),
    (peer(key="A" * 48), "wireguard.peer[0].public_key: invalid key: 48 characters, needs 44"),
    (peer(key=KEY_A[:42] + "J="), "wireguard.peer[0].public_key: invalid key: not canonical"),
    ("[[wireguard.peer]]\npublic_key = '" + KEY_A + "'\n",
     "wireguard.peer[0].allowed_ips: missing (required)"),
    ("[[wireguard.peer]]\nallowed_ips = []\n", "wireguard.peer[0].public_key: missing (required)"),
    # endpoints
    (peer(extra="endpoint = 'hub.example.net'\n"), "wireguard.peer[0].endpoint: not host:port"),
    (peer(extra="endpoint = 'hub.example.net:0'\n"),
     "wireguard.peer[0].endpoint: port outside 1-65535"),
    (peer(extra="endpoint = 'hub.example.net:65536'\n"),
     "wireguard.peer[0].endpoint: port outside"),
    (peer(extra="endpoint = '2001:db8::1:51820'\n"),
     "wireguard.peer[0].endpoint: not host:port (or [IPv6]:port)"),
    (peer(extra="endpoint = '[2001:db8::g]:51820'\n"),
     "wireguard.peer[0].endpoint: not an IPv6 address"),
    (peer(extra="endpoint = '[192.0.2.1]:51820'\n"),
     "wireguard.peer[0].endpoint: not an IPv6 address"),
    (peer(extra="endpoint = '192.0.2.300:51820'\n"),
     "wireguard.peer[0].endpoint: not an IPv4 address"),
    (peer(extra="endpoint = 'hub..net:51820'\n"), "wireguard.peer[0].endpoint: not a host name"),
    (peer(extra="endpoint = '-hub.net:51820'\n"), "wireguard.peer[0].endpoint: not a host name"),
    (peer(extra="endpoint = ':51820'\n"), "wireguard.peer[0].endpoint: not a host name"),
    ("[lan]\ndhcp_lease = 'forever'\n", "lan.dhcp_lease: not a lease time"),
    ("[lan]\ndhcp_lease = '12x'\n", "lan.dhcp_lease: not a lease time"),
    ("[lan]\ndhcp_lease = '0'\n", "lan.dhcp_lease: shorter than 2 minutes (dnsmasq's minimum)"),
    ("[lan]\ndhcp_lease = '119s'\n", "lan.dhcp_lease: shorter than 2 minutes"),
    ("[lan]\ndhcp_lease = '1m'\n", "lan.dhcp_lease: shorter than 2 minutes"),
    ("[lan]\ndhcp_lease = '366d'\n", "lan.dhcp_lease: longer than a year (infinite: no end)"),
    ("[lan]\ndhcp_lease = '53w'\n", "lan.dhcp_lease: longer than a year"),
    ("[lan]\ndhcp_lease = '" + "9" * 5000 + "h'\n", "lan.dhcp_lease: longer than a year"),
])
def test_bad_value_names_the_key_and_the_reason(text, expected):
    assert one(text).startswith(expected)


@pytest.mark.parametrize("value", ["hub.example.net:51820", "203.0.113.2:51820",
                                   "[2001:db8::1]:51820", "localhost:1", "a-b.c-d.example.:9"])
def test_good_endpoints(value):
    load_text(peer(extra=f"endpoint = '{value}'\n"))


@pytest.mark.parametrize("value", ["eth0", "enp3s0", "eth0.100", "br-lan", "wg_hub", "a" * 15])
def test_good_interface_names(value):
    assert load_text(f"[wan]\ninterface = '{value}'\n").wan.interface == value


@pytest.mark.parametrize(("text", "expected"), [
    ("[wan]\nmode = 'static'\n", ["wan.address: missing: mode is static",
                                   "wan.gateway: missing: mode is static (the default route)"]),
    ("[wan]\naddress = '203.0.113.2/24'\n", ["wan.address: only for mode = static"]),
    ("[wan]\nmode = 'static'\naddress = '203.0.113.2/24'\ngateway = '198.51.100.1'\n",
     ["wan.gateway: not inside 203.0.113.0/24"]),
    ("[wan]\nmode = 'static'\naddress = '203.0.113.2/24'\ngateway = '2001:db8::1'\n",
     ["wan.gateway: not the same IP version as wan.address (IPv4)"]),
    ("[lan]\naddress = '10.0.0.1/24'\n", ["lan.dhcp_start: not inside the LAN 10.0.0.0/24",
                                         "lan.dhcp_end: not inside the LAN 10.0.0.0/24"]),
    ("[lan]\ndhcp_start = '192.168.77.200'\n", ["lan.dhcp_end: comes before dhcp_start"]),
    ("[lan]\ndhcp_start = '192.168.77.0'\n",
     ["lan.dhcp_start: is the network or broadcast address of 192.168.77.0/24"]),
    ("[lan]\naddress = '192.168.77.150/24'\n",
     ["lan.address: inside the DHCP range dhcp_start..dhcp_end"]),
    ("[lan]\ninterface = 'eth0'\n", ["lan.interface: same interface as wan.interface"]),
    (WG + "[lan]\naddress = '10.7.0.200/16'\ndhcp_start = '10.7.1.1'\ndhcp_end = '10.7.1.9'\n",
     ["wireguard.address[0]: overlaps lan.address (10.7.0.0/16)"]),
    ("[wireguard]\nenabled = true\n", ["wireguard.address: missing: the tunnel needs an address"]),
    (WG + "route = 'prefixes'\n", ["wireguard.prefixes: missing: route = prefixes"]),
    (WG + "prefixes = ['10.9.0.0/16']\n", ["wireguard.prefixes: only used with route = prefixes"]),
    (WG + "route = 'all'\n" + peer(), ["wireguard.route: all, but no peer has 0.0.0.0/0"]),
    (WG + "route = 'prefixes'\nprefixes = ['10.9.0.0/16']\n" + peer(allowed="'10.9.0.0/24'"),
     ["wireguard.prefixes[0]: no peer's allowed_ips cover it"]),
    (WG + peer(allowed=""), ["wireguard.peer[0].allowed_ips: empty"]),
    (WG + peer() + peer(allowed="'10.7.0.3/32'"),
     ["wireguard.peer[1].public_key: duplicate of wireguard.peer[0]"]),
    (WG + peer(allowed="'10.7.0.0/25'") + peer(KEY_B),
     ["wireguard.peer[1].allowed_ips[0]: overlaps 10.7.0.0/25 of wireguard.peer[0]"]),
    (WG + peer(allowed="'10.7.0.0/25', '10.7.0.2/32'"),
     ["wireguard.peer[0].allowed_ips[1]: overlaps 10.7.0.0/25 of earlier in this peer"]),
    ("[wan.shaping]\nattach = 'tunnel'\n", ["wan.shaping.attach: tunnel, but wireguard is not"]),
    ("[selftest]\niperf3_server = true\n", ["selftest.iperf3_server: needs wireguard enabled"]),
    ("[firewall]\nforward_tunnel_to_wan = true\n",
     ["firewall.forward_tunnel_to_wan: needs wireguard enabled"]),
])
def test_keys_that_contradict_each_other(text, expected):
    found = problems(text)
    assert len(found) == len(expected), found
    for got, want in zip(found, expected, strict=True):
        assert got.startswith(want), found


def test_good_relations():
    load_text(WG + "route = 'all'\n" + peer(allowed="'0.0.0.0/0'"))
    load_text(WG + peer() + peer(KEY_B, "'10.7.0.3/32'"))
    load_text(WG + "route = 'prefixes'\nprefixes = ['10.9.1.0/24']\n"
              + peer(allowed="'10.9.0.0/16'"))
    load_text("[wan]\nmode = 'static'\naddress = '2001:db8::2/64'\ngateway = 'fe80::1'\n")


def test_all_problems_are_reported_at_once_in_file_order():
    text = ("[wan]\nmode = 1\ninterface = 2\n[lan]\nbogus = 1\n[wireguard]\nmtu = 1\n"
            + peer(key="x") + peer(key="y"))
    assert [p.split(":")[0] for p in problems(text)] == [
        "wan.mode", "wan.interface", "lan.bogus", "wireguard.mtu",
        "wireguard.peer[0].public_key", "wireguard.peer[1].public_key"]


def test_a_bad_section_does_not_hide_the_rules_of_a_good_one():
    found = problems("[wan]\nmode = 'static'\n[lan]\nmtu = 1\n")
    assert [p.split(":")[0] for p in found] == ["lan.mtu", "wan.address", "wan.gateway"]


@pytest.mark.parametrize(("text", "line"), [
    ("[wan\n", "line 1"), ("[wan]\nmode = 'dhcp'\nmode = 'static'\n", "line 3"),
    ("[wan]\n\n\ninterface = eth0\n", "line 4"), ("a = [1,\n", "the end of the file"),
    ("[wan]\nx = 1\n[wan]\n", "line 3"),
])
def test_toml_syntax_errors_name_the_line(text, line):
    assert one(text).startswith(f"TOML syntax error at {line}")


SECRET = "mJ1JYpGGd2ghT2bsyeZmoTpOG3C/a1j4KZl41LPf5lw="


@pytest.mark.parametrize("text", [
    f"[wireguard]\nprivate_key = '{SECRET}'\n",
    f"[wireguard]\nPrivateKey = '{SECRET}'\n",
    f"[[wireguard.peer]]\npublic_key = '{KEY_A}'\nallowed_ips = []\npreshared_key = '{SECRET}'\n",
    f"[wireguard]\nsecret = ['{SECRET}']\n",
    f"[wireguard]\nprivate = {{ key = '{SECRET}' }}\n",
    f"[[wireguard.peer]]\npublic_key = '{SECRET[:-2]}'\nallowed_ips = []\n",
    f"[wireguard]\nprivate_key = '{SECRET}'\n[wan]\n'{SECRET}' = 1\n",
    f"[wireguard]\nprivate_key = '{SECRET}'\n\n{SECRET} = \n",
    f"private_key = 1\nprivate_key = '{SECRET}'\n",
])
def test_a_secret_is_never_echoed(text, capsys):
    with pytest.raises(ConfigError) as err:
        load_text(text)
    assert SECRET not in str(err.value)
    assert SECRET[:-2] not in str(err.value)


def test_the_private_key_is_pointed_to_its_file():
    assert one(f"[wireguard]\nprivate_key = '{SECRET}'\n") == (
        "wireguard.private_key: unknown key: the private key is not kept in keel.toml "
        "(it lives in /data/keel/wireguard.key)")


def test_load_file_problems(tmp_path):
    with pytest.raises(ConfigError) as err:
        load_file(tmp_path / "missing.toml")
    assert err.value.lines() == [f"{tmp_path / 'missing.toml'}: cannot read: "
                                 "No such file or directory"]
    latin = tmp_path / "latin.toml"
    latin.write_bytes(b"[system]\nhostname = '\xe9'\n")
    with pytest.raises(ConfigError, match="not UTF-8 text"):
        load_file(latin)


def test_config_check_ok(tmp_path, capsys):
    path = tmp_path / "keel.toml"
    path.write_text(paths.example_text("hub"))
    assert _run(["config", "check", str(path)]) == 0
    assert capsys.readouterr().out == f"ok: {path}\n"


def test_config_check_invalid_prints_each_problem_and_exits_2(tmp_path, capsys):
    path = tmp_path / "keel.toml"
    path.write_text(f"[wan]\nmode = 'x'\n[wireguard]\nmtu = 1\nprivate_key = '{SECRET}'\n")
    assert _run(["config", "check", str(path)]) == 2
    out = capsys.readouterr().out
    assert out.splitlines() == [
        f"{path}: wan.mode: must be one of: dhcp, static",
        f"{path}: wireguard.mtu: outside 1280-9000 bytes",
        f"{path}: wireguard.private_key: unknown key: the private key is not kept in keel.toml "
        "(it lives in /data/keel/wireguard.key)"]


def test_config_check_defaults_to_the_file_in_force(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(paths, "USER", tmp_path / "user.toml")
    monkeypatch.setattr(paths, "DEFAULT", tmp_path / "default.toml")
    (tmp_path / "default.toml").write_text("")
    assert _run(["config", "check"]) == 0
    assert capsys.readouterr().out == f"ok: {tmp_path / 'default.toml'}\n"


def test_config_example_and_show(tmp_path, capsys):
    assert _run(["config", "example", "edge"]) == 0
    text = capsys.readouterr().out
    assert text == paths.example_text("edge")
    path = tmp_path / "edge.toml"
    path.write_text(text)
    assert _run(["config", "show", str(path)]) == 0
    shown = capsys.readouterr().out
    assert load_text(shown) == load_text(text)
    path.write_text("[wan]\nmode = 1\n")
    assert _run(["config", "show", str(path)]) == 2
    with pytest.raises(SystemExit):
        _run(["config", "example", "nope"])
