"""Bypassing CAKE for an A/B comparison, and putting it back whatever happens."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from keel.system.commands import Runner
from keel.system.qdiscs import cake_roots, read_qdiscs
from keel.system.source import RunnerSource, SourceError


def cake_devices(runner: Runner) -> list[str]:
    """Devices with CAKE at their root."""
    try:
        return cake_roots(read_qdiscs(RunnerSource(runner)))
    except SourceError:
        return []


def restore_shaping(runner: Runner) -> list[str]:
    """Re-apply the shaping of the config in force (only what is missing)."""
    from keel.apply import engine
    from keel.model import in_force

    model = in_force()
    probe = engine.Probe(runner)
    steps = engine.plan_shaping(model, probe)
    engine.execute(steps, runner, report=lambda _line: None)
    return [s.why for s in steps]


@contextmanager
def cake_bypassed(runner: Runner) -> Iterator[list[str]]:
    devs = cake_devices(runner)
    try:
        for dev in devs:
            runner.run(["tc", "qdisc", "del", "dev", dev, "root"], check=False)
        yield devs
    finally:
        if devs:
            restore_shaping(runner)
