"""The self-test event protocol: every event type through one JSON object and
back, `--events` as JSON Lines, and the result lines of `keel selftest`."""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

import pytest

from keel.parse.ping import LatencySample
from keel.selftest import cli, events
from keel.selftest.events import Failed, Progress, Sample
from keel.selftest.grading import LatencyStats
from keel.selftest.report import bufferbloat_lines, result_lines, short_lines
from keel.selftest.results import (
    BufferbloatResult,
    MtuResult,
    PhaseResult,
    ThroughputPhase,
    ThroughputResult,
)

EVENTS = Path(__file__).resolve().parents[2] / "fixtures" / "selftest" / "bufferbloat.events.jsonl"

STATS = LatencyStats(25, 1, 4.8, 6.5, 7.7)
BLOAT = BufferbloatResult(
    (PhaseResult("idle", STATS, STATS, None, None, None, None, None, (10.0, 15.0)),
     PhaseResult("download", LatencyStats(50, 0, 9.1, 12.4, 14.0), None, 4.3, 7.6, "A+",
                 92.1, None, (16.0, 26.0)),
     PhaseResult("upload", STATS, None, 0.0, 1.7, "A+", None, 41.7, (27.0, 37.0)),
     PhaseResult("bidirectional", STATS, None, 0.0, 1.7, "A+", 80.5, 30.2, (38.0, 48.0))),
    4.3, "A+", 6593.4, True)
THROUGHPUT = ThroughputResult(
    (ThroughputPhase("download", 92.1, 0.0, 12, 8.5, 20.0, 1.25, 3.2, {"cpu0": 0.41}, False),
     ThroughputPhase("upload", 0.0, 41.7, None, 6.0, 15.0, 0.0, None, {"cpu0": 0.95}, True)),
    82_890, 37_530)
MTU = MtuResult(1500, None, 1420, 1420, None)

EVERY_TYPE = [
    Progress("bufferbloat", "download", 0.42, "download: 6 s left"),
    Sample("tunnel", "10.99.0.2", "idle", LatencySample(1795343533.396783, 4.82)),
    Sample("outside", "192.0.2.2", "upload", LatencySample(1795343533.6, None)),
    Failed("mtu", "keel selftest mtu: even 576-byte packets do not get through"),
    BLOAT, THROUGHPUT, MTU,
]


@pytest.mark.parametrize("event", EVERY_TYPE, ids=lambda e: type(e).__name__)
def test_every_event_type_goes_through_one_json_object(event):
    line = events.dumps(event)
    assert "\n" not in line
    obj = json.loads(line)
    assert obj["type"] in ("progress", "sample", "failed", "bufferbloat", "throughput", "mtu")
    assert events.loads(line) == event
    assert events.from_json(events.to_json(event)) == event


def test_results_carry_their_derived_fields_for_readers_of_the_json():
    assert json.loads(events.dumps(BLOAT))["rpm_label"] == "High"
    assert json.loads(events.dumps(THROUGHPUT))["cpu_bound"] is True


def test_an_unmeasured_phase_survives_as_nan_and_inf():
    nan = float("nan")
    phase = PhaseResult("upload", LatencyStats(5, 5, nan, nan, nan), None, math.inf, math.inf,
                        "F", None, 1.0)
    back = events.loads(events.dumps(BufferbloatResult((phase,), math.inf, "F", 0.0, False)))
    assert math.isnan(back.phases[0].tunnel.p50_ms) and back.increase_ms == math.inf


@pytest.mark.parametrize("line", ['{"type": "weather"}', '{"text": "no type"}', "[1, 2]",
                                  '{"type": "progress", "test": "mtu"}'])
def test_what_is_not_an_event_is_a_value_error(line):
    with pytest.raises(ValueError):
        events.loads(line)


def test_the_captured_stream_parses_line_by_line():
    parsed = [events.loads(line) for line in EVENTS.read_text().splitlines()]
    assert isinstance(parsed[-1], BufferbloatResult)
    assert sum(isinstance(e, Sample) for e in parsed) > 300


def test_events_are_written_as_json_lines(capsys):
    report = cli._printer(events=True)
    for event in EVERY_TYPE:
        report(event)
    out, err = capsys.readouterr()
    assert err == ""
    assert [events.loads(line) for line in out.splitlines()] == EVERY_TYPE


def test_without_events_only_progress_goes_to_stderr(capsys):
    report = cli._printer(events=False)
    for event in [*EVERY_TYPE, EVERY_TYPE[0]]:
        report(event)
    out, err = capsys.readouterr()
    assert out == "" and err == "[ 42%] download: 6 s left\n"


def test_json_output_is_the_results_as_before(capsys):
    args = argparse.Namespace(events=False, json=True, test="bufferbloat")
    cli._finish(args, cli._printer(False), [BLOAT])
    out = capsys.readouterr().out
    assert out == json.dumps([BLOAT.as_dict()], indent=1) + "\n"
    args.test = "mtu"
    cli._finish(args, cli._printer(False), [MTU])
    assert capsys.readouterr().out == json.dumps(MTU.as_dict(), indent=1) + "\n"


def test_result_lines_of_the_command_line():
    lines = bufferbloat_lines([BLOAT])
    assert lines[0].split() == ["phase", "(CAKE", "bypassed)"]
    assert lines[3] == "download           9.1/  12.4/  14.0    4.3    A+     92.1"
    assert "CAKE bypassed: grade A+ (latency increase 4.3 ms), RPM 6593 (High)" in lines
    lines = result_lines([THROUGHPUT])
    assert lines[0] == ("download       down    92.1  up     0.0 Mbit/s  retr 12  "
                        "tunnel 3.2 CPU-s/Gbit  (cpu0 41%)")
    assert lines[2] == "The tunnel is CPU-bound: a core was saturated; the link may carry more."
    assert lines[3] == ("Recommended CAKE rates (90 %): download 82890 kbit/s, "
                        "upload 37530 kbit/s")
    assert result_lines([MTU]) == ["WAN: interface MTU 1500, path MTU to the peer None",
                                   "tunnel: interface MTU 1420, path MTU 1420"]


def test_short_lines_fit_the_console_summary():
    for results in ([BLOAT], [THROUGHPUT], [MTU], [BLOAT, BLOAT]):
        assert all(len(line) <= 56 for line in short_lines(results))
    assert short_lines([MTU]) == ["WAN path MTU None, tunnel path MTU 1420"]
