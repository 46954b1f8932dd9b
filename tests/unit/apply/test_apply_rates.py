"""The console UI's [a]pply rates: the config in force with the two CAKE
rates changed, handed to `keel apply --confirm`; [k] is `keel confirm`."""

from __future__ import annotations

import subprocess

import pytest

from keel.apply import rates
from keel.config import paths
from keel.config.errors import ConfigError
from keel.config.load import read_config


class Recorder:
    def __init__(self, rc: int = 0, out: str = "", err: str = "") -> None:
        self.argv: list[list[str]] = []
        self.result = (rc, out, err)

    def __call__(self, argv: list[str]) -> subprocess.CompletedProcess:
        self.argv.append(argv)
        rc, out, err = self.result
        return subprocess.CompletedProcess(argv, rc, out, err)


@pytest.fixture
def edge(tmp_path):
    path = tmp_path / "keel.toml"
    path.write_text(paths.example_text("edge"))
    return path


def test_the_rates_change_and_nothing_else(edge, tmp_path):
    run = Recorder()
    proposed = tmp_path / "proposed.toml"
    ok, said = rates.apply_rates(3400, 10800, source=edge, proposed=proposed, run=run)
    assert ok and "120 s" in said and "[k]" in said
    (argv,) = run.argv
    assert argv[-6:] == ["apply", "--confirm", "120", "--note",
                         "rates from the throughput test", str(proposed)]
    before, after = read_config(edge).config, read_config(proposed).config
    assert (after.wan.shaping.upload_kbit, after.wan.shaping.download_kbit) == (3400, 10800)
    assert after == rates.with_rates(before, 3400, 10800)
    assert after.wireguard == before.wireguard and after.lan == before.lan


def test_a_refused_apply_says_why(edge, tmp_path):
    run = Recorder(rc=1, err="error: `nft -f -` failed\n")
    ok, said = rates.apply_rates(3400, 10800, source=edge, proposed=tmp_path / "p.toml",
                                 run=run)
    assert not ok and said == "not applied: error: `nft -f -` failed"


def test_rates_outside_the_schema_are_refused_before_anything_runs(edge, tmp_path):
    run = Recorder()
    with pytest.raises(ConfigError, match="upload_kbit"):
        rates.apply_rates(-1, 10800, source=edge, proposed=tmp_path / "p.toml", run=run)
    assert run.argv == []


def test_keep_is_keel_confirm():
    run = Recorder(out="confirmed\n")
    assert rates.confirm(run) == "confirmed"
    assert run.argv[0][-1] == "confirm"
