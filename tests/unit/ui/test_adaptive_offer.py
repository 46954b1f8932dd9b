"""The self-test's [a] with adaptive CAKE, below the screens: what the
throughput test measured, the figures the dialog offers (the rule of
keel.apply.rates.adaptive_bounds) and whether the config in force can take it."""

from __future__ import annotations

from keel.config import paths
from keel.model import reading
from keel.selftest.results import ThroughputResult
from keel.ui.app import config_adaptive_offer
from keel.ui.screens.selftest import adaptive_choice
from keel.ui.selftest import MeasuredRates, RecommendedRates, default_script, outcome


def test_the_outcome_keeps_what_the_test_carried():
    (result,) = [e for e in default_script("throughput") if isinstance(e, ThroughputResult)]
    got = outcome("throughput", [result])
    assert got.recommended == RecommendedRates(38_000_000, 85_000_000)
    assert got.measured == MeasuredRates(41_700_000, 92_100_000)  # the best phase each way
    assert outcome("bufferbloat", []).measured is None


def test_the_figures_offered_are_the_rule():
    offered = adaptive_choice(RecommendedRates(38_000_000, 85_000_000),
                              MeasuredRates(41_700_000, 92_100_000))
    assert offered == "egress 19.0-38.0-41.7, ingress 42.5-85.0-92.1"
    one_way = adaptive_choice(RecommendedRates(0, 85_000_000), MeasuredRates(0, 92_100_000))
    assert one_way == "egress not shaped, ingress 42.5-85.0-92.1"


def test_the_config_in_force_says_whether_it_can_take_it(tmp_path, monkeypatch):
    config = tmp_path / "keel.toml"
    monkeypatch.setattr(reading, "USER_CONFIG", config)
    config.write_text(paths.example_text("edge"))
    assert config_adaptive_offer() is None
    config.write_text(paths.example_text("hub"))
    assert "no tunnel peer with an endpoint" in config_adaptive_offer()
    config.write_text("[wan]\nmode = 'carrier pigeon'\n")
    assert config_adaptive_offer() == "the config in force is invalid"
