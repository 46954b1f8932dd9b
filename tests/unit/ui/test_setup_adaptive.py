"""The setup wizard's shaping step with adaptive CAKE: offered when the line
is to be measured and the tunnel has a peer to probe (an edge's, with an
endpoint, or the hub it pairs with); never by default; once kept, the
self-test's [a] then [y] takes adaptive CAKE by the rule of
keel.apply.rates.adaptive_bounds."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import keel.config
from keel.apply.rates import with_rates
from keel.config.load import parse_config
from keel.ui import settings_model
from keel.ui import setup_model as m
from tests.fixtures.ports import TWO_PORTS as NICS
from tests.unit.ui.test_setup_model import BASE, KEY, SHIPPED

EXAMPLES = Path(keel.config.__file__).parent / "examples"
EDGE = parse_config((EXAMPLES / "edge.toml").read_text()).config


def answers(**kw) -> m.Answers:
    a = m.from_config(SHIPPED, NICS)
    for name, value in kw.items():
        a = m.set_answer(a, name, value)
    return a


def config_of(a: m.Answers, base=BASE):
    return parse_config(m.proposed_text(a, base)).config


def manual_edge(**kw) -> m.Answers:
    return answers(tunnel="manual", peer_public_key=KEY, peer_endpoint="203.0.113.2:51820",
                   **kw)


def test_offered_to_an_edge_with_a_peer_to_probe():
    assert "adaptive" in m.choices("shaping", manual_edge())
    assert "adaptive" in m.choices("shaping", answers(tunnel="pair"))  # the hub it pairs with
    assert m.adaptive_refusal(manual_edge()) is None


def test_not_offered_without_a_peer_to_probe_and_why():
    no_tunnel = answers()
    assert "adaptive" not in m.choices("shaping", no_tunnel)
    assert "no tunnel" in m.adaptive_refusal(no_tunnel)
    no_endpoint = answers(tunnel="manual", peer_public_key=KEY)
    assert "adaptive" not in m.choices("shaping", no_endpoint)
    assert "no endpoint" in m.adaptive_refusal(no_endpoint)
    hub = answers(role="hub", tunnel="pair")
    assert "adaptive" not in m.choices("shaping", hub)
    assert "runs on the edge" in m.adaptive_refusal(hub)


def test_off_by_default():
    a = m.from_config(EDGE, NICS)
    assert a.shaping == "manual"  # the example's rates
    with_tunnel_no_rates = dataclasses.replace(EDGE, wan=dataclasses.replace(
        EDGE.wan, shaping=dataclasses.replace(EDGE.wan.shaping, upload_kbit=0,
                                              download_kbit=0)))
    assert m.from_config(with_tunnel_no_rates, NICS).shaping == "selftest"  # not adaptive
    assert m.Answers().shaping == "off"


def test_adaptive_measures_first_the_config_has_no_rates_yet():
    a = manual_edge(shaping="adaptive")
    assert a.shaping == "adaptive" and m.measures(a)
    s = config_of(a).wan.shaping
    assert (s.upload_kbit, s.download_kbit, s.adaptive) == (0, 0, False)
    assert m.check(a, BASE).count == 0
    assert m.summary(a)[-1] == "shaping    adaptive, once the self-test after setup measures " \
                               "the line"


def test_losing_the_peer_to_probe_falls_back_to_measuring_or_off():
    a = manual_edge(shaping="adaptive")
    assert m.set_answer(a, "peer_endpoint", "").shaping == "selftest"
    assert m.set_answer(a, "tunnel", "none").shaping == "off"


def test_an_adaptive_config_opened_again_measured_anew_leaves_no_bounds_behind():
    adaptive = with_rates(EDGE, 4500, 18000, (5000, 20000))
    base = settings_model.as_dict(adaptive)
    a = m.set_answer(m.from_config(adaptive, NICS), "shaping", "selftest")
    s = config_of(a, base).wan.shaping
    assert not s.adaptive and (s.upload_min_kbit, s.upload_max_kbit, s.download_min_kbit,
                               s.download_max_kbit) == (0, 0, 0, 0)
    # rates by hand keep the config's own adaptive bounds
    kept = config_of(m.from_config(adaptive, NICS), base).wan.shaping
    assert kept.adaptive and kept.upload_max_kbit == 5000
