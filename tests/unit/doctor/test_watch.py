"""`keel doctor --watch`: a line (or a JSON object) a second from the same
collectors as the console UI."""

from __future__ import annotations

import io
import json

from keel.doctor.watch import watch
from tests.ui.uihelpers import fixture_collectors, tunnel_only_collectors


class Clock:
    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t

    def sleep(self, seconds: float) -> None:
        self.t += max(seconds, 0.01)


def test_a_line_a_second_and_the_pingers_stopped():
    clock = Clock()
    out = io.StringIO()
    last = watch(fixture_collectors(), 3, out, as_json=False, clock=clock, sleep=clock.sleep)
    lines = out.getvalue().splitlines()
    assert len(lines) == 4  # 0, 1, 2, 3 s
    assert lines[-1].endswith("| healthy") and "stall p99 0 max 1 ms" in lines[-1]
    assert "cake up 40.0M down 40.0M" in lines[-1]  # the rates now (adaptive CAKE moves them)
    assert last is not None and last.worst.cause == "healthy"


def test_json_lines_carry_signals_and_verdicts():
    clock = Clock()
    out = io.StringIO()
    watch(fixture_collectors(), 1, out, as_json=True, clock=clock, sleep=clock.sleep)
    records = [json.loads(line) for line in out.getvalue().splitlines()]
    assert records[-1]["verdicts"][0]["cause"] == "healthy"
    assert records[-1]["signals"]["stall_max_ms"] == 1.2


def test_a_rise_inside_the_tunnel_only_is_named_each_second_once_held():
    clock = Clock()
    out = io.StringIO()
    last = watch(tunnel_only_collectors(), 10, out, as_json=False, clock=clock,
                 sleep=clock.sleep)
    lines = out.getvalue().splitlines()
    assert lines[0].endswith("| healthy")  # one late second is not a verdict
    assert lines[-1].endswith("| latency rises in the tunnel only: +36 ms (outside +8): "
                              "the peer's side or path")
    assert "tunnel 56 ms (+36)" in lines[-1]
    assert last is not None and last.worst.cause == "tunnel_path"
