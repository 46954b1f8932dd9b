"""Progress events a self-test reports while it runs (the CLI prints them,
the UI draws them)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from keel.parse.ping import PingSample


@dataclass(frozen=True)
class Progress:
    test: str  # "throughput", "bufferbloat", "mtu"
    phase: str
    fraction: float  # of the whole test, 0..1
    text: str


@dataclass(frozen=True)
class Sample:
    """A latency probe came back (or did not): for a live plot."""

    target: str  # "tunnel" or "outside"
    phase: str
    sample: PingSample


Event = Progress | Sample
Report = Callable[[Event], None]


def ignore(_event: Event) -> None:
    return None


class SelfTestError(RuntimeError):
    """A self-test cannot run (no peer, no iperf3 server, tunnel down): one line."""
