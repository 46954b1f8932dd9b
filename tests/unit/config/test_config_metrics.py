"""[metrics]: off by default, a port that nothing else of the router takes,
somewhere to serve it, on_wan only when enabled; the model carries it."""

from __future__ import annotations

import pytest

from keel.config.errors import ConfigError
from keel.config.load import load_file, load_text
from keel.config.schema import Config
from keel.model import model_from_config
from keel.ports import METRICS_TCP
from tests.unit.config.test_config_schema import DEFAULT

LAN = "[lan]\naddress = '192.168.77.1/24'\n"
WG = ("[wireguard]\nenabled = true\naddress = ['10.7.0.2/24']\n"
      "[[wireguard.peer]]\npublic_key = 'HlOu1tgN6jIPCqo/B9y+b7TT1bltyagEMGZGjSZNPVI='\n"
      "allowed_ips = ['10.7.0.1/32']\nname = 'hub'\n")


def metrics(**keys: object) -> str:
    lines = [f"{k} = {str(v).lower() if isinstance(v, bool) else repr(v)}"
             for k, v in keys.items()]
    return "[metrics]\n" + "\n".join(lines) + "\n"


def problems(text: str) -> list[str]:
    with pytest.raises(ConfigError) as err:
        load_text(text, "t.toml")
    return [str(p) for p in err.value.problems]


def test_off_by_default_on_port_9586_not_on_the_wan():
    m = Config().metrics
    assert (m.enabled, m.port, m.on_wan) == (False, 9586, False) and METRICS_TCP == 9586
    assert load_file(DEFAULT).metrics == m  # the shipped file spells the defaults out
    assert "\n[metrics]\n" in DEFAULT.read_text()


@pytest.mark.parametrize("text", [
    LAN + metrics(enabled=True),
    WG + metrics(enabled=True, port=9100),  # a tunnel alone (a hub)
    metrics(enabled=True, on_wan=True),  # the WAN alone, by choice
    LAN + WG + metrics(enabled=True, on_wan=True, port=65535),
])
def test_a_port_and_a_place_to_serve_it(text):
    model = model_from_config(load_text(text))
    assert model.metrics.enabled


@pytest.mark.parametrize(("text", "expected"), [
    (LAN + metrics(enabled=True, port=0), "metrics.port: outside 1-65535"),
    (LAN + metrics(enabled=True, port=65536), "metrics.port: outside 1-65535"),
    (LAN + metrics(enabled=True, port="9586"), "metrics.port: must be an integer, not a string"),
    (LAN + metrics(enabled="yes"), "metrics.enabled: must be true or false, not a string"),
    (LAN + metrics(enabled=True, listen="0.0.0.0"), "metrics.listen: unknown key"),
    (LAN + metrics(enabled=True, port=22), "metrics.port: tcp 22 is keel's own: SSH"),
    (LAN + metrics(enabled=True, port=53), "metrics.port: tcp 53 is keel's own: DNS "
                                           "(dnsmasq, on the LAN)"),
    (LAN + metrics(enabled=True, port=5201), "metrics.port: tcp 5201 is keel's own: the "
                                             "iperf3 server (selftest.iperf3_server)"),
    (LAN + metrics(enabled=True, port=51820), "metrics.port: tcp 51820 is keel's own: "
                                              "pairing (keel pair)"),
    (LAN + metrics(enabled=True) + "[firewall]\nopen_tcp = [80, 9586]\n",
     "metrics.port: tcp 9586 is opened on the WAN for another service (firewall.open_tcp[1]); "
     "to serve the metrics on the WAN, set metrics.on_wan = true instead"),
    (LAN + metrics(enabled=True, port=8080)
     + "[[forward]]\nname = 'web'\nport = '8000-8090'\nto = '192.168.77.5'\n",
     "metrics.port: tcp 8080 is the public port of forward[0] (web)"),
    (LAN + metrics(enabled=True, port=8080)
     + "[[forward]]\nname = 'game'\nport = 8080\nto = '192.168.77.5'\nprotocol = 'both'\n",
     "metrics.port: tcp 8080 is the public port of forward[0] (game)"),
    (metrics(enabled=True), "metrics.enabled: nowhere to serve: no [lan] and no tunnel "
                            "(wireguard.enabled with an address); set metrics.on_wan = true "
                            "to serve on the WAN"),
    (LAN + metrics(on_wan=True), "metrics.on_wan: only with enabled = true"),
])
def test_bad_metrics_are_named_by_key_and_reason(text, expected):
    assert problems(text) == [expected]


def test_what_does_not_take_the_port_is_no_problem():
    """A UDP forward on the port, an IPv6 forward (not translated: another
    address's port), a port open on the WAN while the metrics are off."""
    udp = "[[forward]]\nname = 'dns'\nport = 9586\nto = '192.168.77.5'\nprotocol = 'udp'\n"
    load_text(LAN + metrics(enabled=True) + udp)
    load_text(LAN + "[firewall]\nopen_tcp = [9586]\n")
    load_text(LAN + metrics(port=22))  # off: the port is not used


def test_a_bad_section_elsewhere_gives_no_second_false_problem():
    """A [lan] of the wrong shape is named once; the metrics' own rule that
    reads it does not run and say "no [lan]"."""
    assert problems("lan = 'x'\n" + metrics(enabled=True)) == [
        "lan: must be a table, not a string"]


def test_the_model_carries_it():
    model = model_from_config(load_text(LAN + metrics(enabled=True, port=9100, on_wan=True)))
    assert (model.metrics.enabled, model.metrics.port, model.metrics.on_wan) == (True, 9100, True)
    assert not model_from_config(Config()).metrics.enabled
