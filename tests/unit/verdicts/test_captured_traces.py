"""The verdicts on signal traces captured in the lab (`keel doctor --watch
--json` on the guests of tests/vm/test_starving.py), judged again second by
second: the rules, not the recorded verdicts, are under test."""

from __future__ import annotations

import json
from pathlib import Path

from keel.verdicts import Signals, judge

TRACES = Path(__file__).resolve().parents[2] / "fixtures" / "lab" / "verdicts"


def replay(name: str) -> list[tuple[float, list[str]]]:
    """(seconds since the trace began, causes) for each second, judged anew."""
    history: list[Signals] = []
    out = []
    for line in (TRACES / name).read_text().splitlines():
        if not line.strip():
            continue
        history.append(Signals(**json.loads(line)["signals"]))
        out.append((history[-1].t - history[0].t, [v.cause for v in judge(history)]))
    return out


def test_the_hub_throttled_on_a_duty_cycle_is_starved_and_then_not():
    # the hub was stopped 150 ms of every 250 ms from about 11 s to 36 s
    seconds = replay("hub-starving.jsonl")
    assert not any("starved" in c for t, c in seconds if t < 11)  # the baseline
    assert any("starved" in c for t, c in seconds if 11 <= t < 37)
    assert not any("starved" in c for t, c in seconds if t > 50)  # the throttle off


def test_the_edge_of_the_starving_hub_blames_the_far_end_not_itself():
    causes = {c for _, cs in replay("edge-hub-starving.jsonl") for c in cs}
    assert "starved" not in causes and "bloat" not in causes


def test_a_cpu_bound_tunnel_in_the_lab():
    causes = [c for _, c in replay("edge-cpu-bound.jsonl")]
    assert any("cpu_bound" in c for c in causes)
    assert not any("starved" in c or "bloat" in c for c in causes)


def test_the_bloated_line_in_the_lab():
    causes = [c for _, c in replay("edge-bloat.jsonl")]
    assert any("bloat" in c for c in causes)
    assert not any("starved" in c for c in causes)


def test_a_starved_hub_whose_own_probes_run_in_step_with_the_stalls():
    # a second run: the hub's own pings fired as the CPU came back and were
    # answered before it went again (+18 ms at most), while the stall meter saw
    # 150 ms every second from about 12 s to 37 s
    seconds = replay("hub-starving-in-step.jsonl")
    named = [t for t, c in seconds if "starved" in c]
    assert named and 12 <= named[0] <= 12 + 10
    assert not any("starved" in c for t, c in seconds if t < 12 or t > 50)
