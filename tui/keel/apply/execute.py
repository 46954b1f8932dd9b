"""Execute: run a plan's steps in order and say what each did."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from keel.apply.steps import Step
from keel.boot.timeline import boottime
from keel.system.commands import Runner


@dataclass(frozen=True)
class Outcome:
    """A step that ran, and the notes its action returned."""

    step: Step
    notes: tuple[str, ...] = ()


def _write(path: str, text: str, mode: int) -> None:
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(p, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    with os.fdopen(fd, "w") as f:
        f.write(text)


def run_step(step: Step, runner: Runner, report: Callable[[str], None] = print) -> Outcome:
    """One step: its line, its files, its action (its notes reported under
    the line), its commands, then its stamps. A failing command raises
    CommandError and leaves the stamps unwritten."""
    report(f"{step.component}: {step.why}")
    for path, text, mode in step.files:
        _write(path, text, mode)
    notes = tuple(step.action() or ()) if step.action is not None else ()
    for note in notes:
        report(f"  {note}")
    for cmd in step.commands:
        runner.run(list(cmd))
    for cmd in step.started:
        runner.start(list(cmd))
    for path, value in step.stamps:
        p = Path(path)
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(value)
    return Outcome(step, notes)


def execute(steps: list[Step], runner: Runner, report: Callable[[str], None] = print,
            timed: Callable[[Step, float, float], None] | None = None) -> list[Outcome]:
    """Every step in order; stops at the first that fails (CommandError).
    `timed(step, start, end)` is told each step's times (the boot timeline)."""
    if timed is None:
        return [run_step(step, runner, report) for step in steps]
    outcomes = []
    for step in steps:
        start = boottime()
        outcomes.append(run_step(step, runner, report))
        timed(step, start, boottime())
    return outcomes
