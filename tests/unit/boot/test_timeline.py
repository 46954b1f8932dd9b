"""The boot timeline (keel.boot.timeline) and `keel doctor --boot`
(keel.doctor.boot), on a timeline captured from a dev image's first boot in
the lab, and on what the boot's shell scripts may leave half-written."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from keel.boot import timeline
from keel.doctor import boot

CAPTURED = Path(__file__).parents[2] / "fixtures/boot/first-boot.jsonl"


def marks() -> list[timeline.Mark]:
    return timeline.parse(CAPTURED.read_text())


def test_the_captured_timeline_reads_whole() -> None:
    ms = marks()
    assert len(ms) == 27
    assert ms[0] == timeline.Mark("kernel", 0.0, 3.64)
    python = next(m for m in ms if m.step.startswith("keel apply --boot"))
    assert python.start is None and python.end == 12.24


def test_a_mark_without_a_start_starts_where_the_one_before_ended() -> None:
    rows = {r.step: r for r in boot.rows(marks())}
    assert rows["keel apply --boot: python, imports"].start == 8.99  # S10network's end
    assert round(rows["keel apply --boot: python, imports"].seconds, 2) == 3.25


def test_milestones_say_when_the_router_routed() -> None:
    ms = boot.milestones(marks())
    assert ms["firewall"] == 13.72
    assert ms["forwarding"] == 13.80
    assert ms["LAN served"] == 14.02
    assert ms["tunnel made"] is None and ms["first handshake"] is None
    assert ms["routing"] == 14.02


def test_doctor_boot_lines() -> None:
    lines = boot.lines(marks())
    assert lines[-1] == "routing 14.0 s after the kernel started"
    kernel = next(line for line in lines if line.endswith("kernel"))
    assert kernel.split()[:3] == ["0.00", "3.64", "3.64"] and "#" in kernel
    assert all(len(line) <= 120 for line in lines)


def test_as_dict_is_json() -> None:
    data = json.loads(json.dumps(boot.as_dict(marks())))
    assert data["milestones"]["routing"] == 14.02
    assert data["steps"][0]["step"] == "kernel"


def test_no_timeline_says_so() -> None:
    assert "no boot timeline" in boot.lines([])[0]


def test_half_lines_and_odd_values_are_skipped() -> None:
    text = ('{"step": "a", "start": 1, "end": 2}\n{"step": "b", "sta\n'
            '{"step": "c", "start": null, "end": -1}\n{"step": 5, "end": 3}\n'
            '{"step": "d", "start": true, "end": 4}\n[1, 2]\n')
    assert timeline.parse(text) == [timeline.Mark("a", 1.0, 2.0), timeline.Mark("d", None, 4.0)]


@given(st.text())
def test_any_text_parses_without_error(text: str) -> None:
    for m in timeline.parse(text):
        assert m.end >= 0 and len(m.step) <= 80
    boot.lines(timeline.parse(text))


def test_append_then_read(tmp_path: Path) -> None:
    path = tmp_path / "boot.jsonl"
    timeline.append(timeline.Mark("x", 1.5, 2.5), path)
    timeline.append(timeline.Mark("y", None, 3.0), path)
    assert timeline.read(path) == [timeline.Mark("x", 1.5, 2.5), timeline.Mark("y", None, 3.0)]
    assert timeline.read(tmp_path / "none") == []
