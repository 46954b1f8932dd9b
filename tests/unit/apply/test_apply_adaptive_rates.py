"""The console UI's [a] with adaptive CAKE: the base is the rate recommended,
the max what the throughput test carried, the min half the base; offered only
with a tunnel peer that has an endpoint (what the daemon probes)."""

from __future__ import annotations

import dataclasses
import subprocess

import pytest

from keel.apply import rates
from keel.config import paths
from keel.config.dump import to_toml
from keel.config.errors import ConfigError
from keel.config.load import parse_config, read_config


class Recorder:
    def __init__(self, rc: int = 0) -> None:
        self.argv: list[list[str]] = []
        self.rc = rc

    def __call__(self, argv: list[str]) -> subprocess.CompletedProcess:
        self.argv.append(argv)
        return subprocess.CompletedProcess(argv, self.rc, "", "")


@pytest.fixture
def edge(tmp_path):
    path = tmp_path / "keel.toml"
    path.write_text(paths.example_text("edge"))
    return path


def test_the_rule():
    assert rates.adaptive_bounds(38_000, 41_700) == (19_000, 38_000, 41_700)
    assert rates.adaptive_bounds(1_351, 1_500) == (675, 1_351, 1_500)
    assert rates.adaptive_bounds(1, 1) == (1, 1, 1)  # never a min of 0
    assert rates.adaptive_bounds(5_000, 4_000) == (2_500, 5_000, 5_000)  # base <= max always
    assert rates.adaptive_bounds(0, 9_000) == (0, 0, 0)  # not shaped: nothing to adapt


def test_adaptive_is_applied_with_confirm_and_the_loader_takes_it(edge, tmp_path):
    run = Recorder()
    proposed = tmp_path / "proposed.toml"
    ok, said = rates.apply_rates(4500, 18000, source=edge, proposed=proposed, run=run,
                                 measured=(5000, 20000))
    assert ok and said.startswith("applied adaptive CAKE up 2250-4500-5000, "
                                  "down 9000-18000-20000 kbit/s (min-base-max): rolls back")
    (argv,) = run.argv
    assert argv[-6:] == ["apply", "--confirm", "120", "--note",
                         "adaptive rates from the throughput test", str(proposed)]
    before, after = read_config(edge).config, read_config(proposed).config
    s = after.wan.shaping
    assert s.adaptive and (s.upload_min_kbit, s.upload_kbit, s.upload_max_kbit) == \
        (2250, 4500, 5000)
    assert (s.download_min_kbit, s.download_kbit, s.download_max_kbit) == (9000, 18000, 20000)
    assert after == rates.with_rates(before, 4500, 18000, (5000, 20000))
    assert after.wireguard == before.wireguard and after.lan == before.lan
    assert s.diffserv == before.wan.shaping.diffserv and s.attach == before.wan.shaping.attach


def test_fixed_rates_turn_adaptive_off(edge, tmp_path):
    """[y] on an adaptive config: fixed at the new rates, the old bounds gone
    (a base outside them would be refused by the loader otherwise)."""
    adaptive = rates.with_rates(read_config(edge).config, 4500, 18000, (5000, 20000))
    fixed = rates.with_rates(adaptive, 1000, 3000)
    s = fixed.wan.shaping
    assert not s.adaptive and (s.upload_kbit, s.download_kbit) == (1000, 3000)
    assert (s.upload_min_kbit, s.upload_max_kbit, s.download_min_kbit,
            s.download_max_kbit) == (0, 0, 0, 0)
    parse_config(to_toml(fixed), "fixed.toml")  # the loader takes it


def test_one_direction_measured_is_adapted_alone(edge):
    config = rates.with_rates(read_config(edge).config, 0, 18000, (0, 20000))
    s = config.wan.shaping
    assert s.adaptive and (s.upload_min_kbit, s.upload_kbit, s.upload_max_kbit) == (0, 0, 0)
    parse_config(to_toml(config), "one.toml")


def test_offered_only_with_a_peer_to_probe(edge):
    config = read_config(edge).config
    assert rates.adaptive_refusal(config) is None
    wg = config.wireguard
    no_endpoint = dataclasses.replace(config, wireguard=dataclasses.replace(
        wg, peer=tuple(dataclasses.replace(p, endpoint=None) for p in wg.peer)))
    assert "no tunnel peer with an endpoint" in rates.adaptive_refusal(no_endpoint)
    off = dataclasses.replace(config, wireguard=dataclasses.replace(wg, enabled=False))
    assert "the tunnel is off" in rates.adaptive_refusal(off)


def test_without_a_peer_to_probe_the_loader_refuses_before_anything_runs(tmp_path):
    hub = tmp_path / "keel.toml"
    hub.write_text(paths.example_text("hub"))
    assert rates.adaptive_refusal(read_config(hub).config) is not None
    run = Recorder()
    with pytest.raises(ConfigError, match=r"wan\.shaping\.adaptive"):
        rates.apply_rates(4500, 18000, source=hub, proposed=tmp_path / "p.toml", run=run,
                          measured=(5000, 20000))
    assert run.argv == []
