"""`keel doctor --watch --json` run on a lab guest in the background, and its
seconds read back on the host's clock."""

from __future__ import annotations

import json
import time

from tests.lab.guest import Guest
from tests.lab.paths import RUNS


def clock_offset(guest: Guest) -> float:
    """The guest's clock minus the host's (seconds), through the console."""
    before = time.time()
    theirs = float(guest.check("date +%s.%N"))
    return theirs - (before + time.time()) / 2


def start_watch(guest: Guest, seconds: int, name: str = "watch") -> None:
    # at a higher priority than the load it watches (a CPU-bound tunnel would
    # otherwise leave it a few polls in 20 s under emulation)
    guest.check(f"rm -f /run/{name}.jsonl; (nice -n -10 keel doctor --watch {seconds} --json "
                f"> /run/{name}.jsonl 2>/run/{name}.err &)")


def records(guest: Guest, offset: float, name: str = "watch") -> list[dict]:
    """The watch's seconds, each with `host_t`: its time on the host's clock.
    The raw lines are kept in out/lab-runs/watch-<guest>-<name>.jsonl (captured
    signal traces, for the verdicts' unit tests)."""
    out = []
    text = guest.check(f"cat /run/{name}.jsonl", 60)
    RUNS.mkdir(parents=True, exist_ok=True)
    (RUNS / f"watch-{guest.name}-{name}.jsonl").write_text(text + "\n")
    lines = text.splitlines()
    for i, line in enumerate(lines):
        try:
            rec = json.loads(line)
        except json.JSONDecodeError:
            if i == len(lines) - 1:  # the watch still writing it
                break
            raise
        rec["host_t"] = rec["t"] - offset
        rec["causes"] = [v["cause"] for v in rec["verdicts"]]
        out.append(rec)
    return out


def between(recs: list[dict], start: float, end: float) -> list[dict]:
    return [r for r in recs if start <= r["host_t"] < end]
