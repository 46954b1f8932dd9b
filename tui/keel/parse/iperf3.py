"""iperf3 `--json` results and `--json-stream` events."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any


class Iperf3Error(ValueError):
    """iperf3 reported an error (its own words)."""


@dataclass(frozen=True)
class Iperf3Result:
    sent_bps: float
    received_bps: float
    retransmits: int | None
    seconds: float
    streams: int
    reverse: bool
    bidir_reverse_bps: float | None  # the other direction of a --bidir test
    cpu_local: float  # percent of all the host's CPUs
    cpu_remote: float


@dataclass(frozen=True)
class Iperf3Interval:
    start: float
    end: float
    bps: float
    retransmits: int | None
    reverse: bool = False
    omitted: bool = False  # within iperf3's --omit ramp-up, not in the totals


def parse_result(doc: dict[str, Any]) -> Iperf3Result:
    if doc.get("error"):
        raise Iperf3Error(str(doc["error"]))
    end = doc.get("end", {})
    start = doc.get("start", {})
    test = start.get("test_start", {})
    sent = end.get("sum_sent", {})
    received = end.get("sum_received", {})
    bidir = end.get("sum_received_bidir_reverse")
    cpu = end.get("cpu_utilization_percent", {})
    return Iperf3Result(
        sent_bps=float(sent.get("bits_per_second", 0.0)),
        received_bps=float(received.get("bits_per_second", 0.0)),
        retransmits=sent.get("retransmits"),
        seconds=float(received.get("seconds", sent.get("seconds", 0.0))),
        streams=int(test.get("num_streams", 1)),
        reverse=bool(test.get("reverse", 0)),
        bidir_reverse_bps=float(bidir["bits_per_second"]) if bidir else None,
        cpu_local=float(cpu.get("host_total", 0.0)),
        cpu_remote=float(cpu.get("remote_total", 0.0)),
    )


def parse_json(text: str) -> Iperf3Result:
    return parse_result(json.loads(text))


def parse_stream_line(line: str) -> tuple[str, Any]:
    """One --json-stream line: (event, payload). Intervals come parsed."""
    doc = json.loads(line)
    event, data = doc.get("event", ""), doc.get("data")
    if event == "error":
        raise Iperf3Error(str(data))
    if event == "interval":
        intervals = []
        for key, reverse in (("sum", False), ("sum_bidir_reverse", True)):
            s = data.get(key)
            if s:
                intervals.append(Iperf3Interval(
                    start=float(s["start"]), end=float(s["end"]),
                    bps=float(s["bits_per_second"]), retransmits=s.get("retransmits"),
                    reverse=reverse, omitted=bool(s.get("omitted", False))))
        return event, tuple(intervals)
    if event == "end":
        return event, parse_result({"end": data})
    return event, data
