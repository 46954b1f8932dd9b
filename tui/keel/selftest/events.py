"""The self-test event protocol: what a self-test reports while it runs and
what it finds, each event one JSON object with a `type` field.

`keel selftest KIND --events` writes them as JSON Lines on stdout (one event a
line, flushed); the console UI reads them back with `loads`. The types:

- progress: how far the test is (test, phase, fraction of the whole, text)
- sample: a latency probe came back, or did not (for a live plot)
- throughput, bufferbloat, mtu: a result (a bufferbloat run with --compare
  reports two: the run with CAKE bypassed, then the run with CAKE)
- failed: the test cannot go on (one line saying why)
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

from keel.parse.ping import LatencySample
from keel.selftest.results import BufferbloatResult, MtuResult, TestResult, ThroughputResult


@dataclass(frozen=True)
class Progress:
    test: str  # "throughput", "bufferbloat", "mtu"
    phase: str
    fraction: float  # of the whole test, 0..1
    text: str


@dataclass(frozen=True)
class Sample:
    """A latency probe's fate, once final (keel.parse.ping.PingTracker: its RTT,
    or lost when no reply came in time): for a live plot."""

    target: str  # "tunnel" or "outside"
    address: str
    phase: str
    sample: LatencySample


@dataclass(frozen=True)
class Failed:
    test: str
    error: str  # the one line `keel selftest` prints on stderr


Event = Progress | Sample | Failed | TestResult
Report = Callable[[Event], None]

RESULT_TYPES: dict[str, type[ThroughputResult] | type[BufferbloatResult] | type[MtuResult]] = {
    "throughput": ThroughputResult, "bufferbloat": BufferbloatResult, "mtu": MtuResult}


def ignore(_event: Event) -> None:
    return None


class SelfTestError(RuntimeError):
    """A self-test cannot run (no peer, no iperf3 server, tunnel down): one line."""


def to_json(event: Event) -> dict[str, Any]:
    """The event as one JSON object with its `type`."""
    if isinstance(event, Progress):
        return {"type": "progress"} | asdict(event)
    if isinstance(event, Sample):
        s = event.sample
        return {"type": "sample", "target": event.target, "address": event.address,
                "phase": event.phase, "sent": s.sent, "rtt_ms": s.rtt_ms}
    if isinstance(event, Failed):
        return {"type": "failed"} | asdict(event)
    for name, cls in RESULT_TYPES.items():
        if isinstance(event, cls):
            return {"type": name} | event.as_dict()
    raise TypeError(f"not a self-test event: {event!r}")


def from_json(obj: dict[str, Any]) -> Event:
    """An event from its JSON object; ValueError for an unknown or broken one."""
    kind = obj.get("type") if isinstance(obj, dict) else None
    try:
        if kind == "progress":
            return Progress(obj["test"], obj["phase"], float(obj["fraction"]), obj["text"])
        if kind == "sample":
            rtt = obj["rtt_ms"]
            return Sample(obj["target"], obj["address"], obj["phase"],
                          LatencySample(float(obj["sent"]), None if rtt is None else float(rtt)))
        if kind == "failed":
            return Failed(obj["test"], obj["error"])
        if kind in RESULT_TYPES:
            return RESULT_TYPES[kind].from_dict(
                {k: v for k, v in obj.items() if k not in ("type", "rpm_label", "cpu_bound")})
    except (KeyError, TypeError) as err:
        raise ValueError(f"broken {kind} event: {err}") from None
    raise ValueError(f"not a self-test event type: {kind!r}")


def dumps(event: Event) -> str:
    """One line of JSON (no newline)."""
    return json.dumps(to_json(event), separators=(",", ":"))


def loads(line: str) -> Event:
    return from_json(json.loads(line))
