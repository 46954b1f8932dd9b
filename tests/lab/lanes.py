"""Two lanes for `make test` on a 2-core machine: the side lane runs the lab
modules that name `LANE = "side"` (the upgrade lab: one guest busy at a time,
mostly reboots and waits) in a second pytest process, while the main lane runs
everything else. A module whose verdicts measure the host's spare CPU (rates,
latency under load, CPU cost) names `QUIET_HOST = True`: the main lane runs
those last, and each waits until the side lane has ended.

    python -m tests.lab.lanes [pytest arguments] PATHS

The side lane's output goes to out/lab-runs/side-lane.log and is printed when
it ends; the exit status is the first lane's that failed. `pytest` run
directly (`--lane all`, the default) runs every module in one process, in the
same order."""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from tests.lab import paths
from tests.lab.lifetime import shared_name

LOCK = paths.RUNS / "side-lane.lock"
LOG = paths.RUNS / "side-lane.log"


def lane_of(module: Any) -> str:
    return getattr(module, "LANE", "main")


def quiet(module: Any) -> bool:
    return bool(getattr(module, "QUIET_HOST", False))


def select(items: list[Any], lane: str) -> tuple[list[Any], list[Any]]:
    """The items this lane runs, and those it leaves to the other one."""
    if lane == "all":
        return items, []
    keep = [i for i in items if lane_of(getattr(i, "module", None)) == lane]
    return keep, [i for i in items if i not in keep]


def quiet_last(items: Iterable[Any]) -> list[Any]:
    """Blocks of items (a module, or the modules sharing one lab) in their
    order, those blocks that hold a QUIET_HOST module moved to the end."""
    blocks: dict[object, list[Any]] = {}
    for item in items:
        module = getattr(item, "module", None)
        key = shared_name(module) or getattr(module, "__name__", None) or item.nodeid
        blocks.setdefault(key, []).append(item)
    loud = [b for b in blocks.values() if not any(quiet(getattr(i, "module", None)) for i in b)]
    calm = [b for b in blocks.values() if b not in loud]
    return [item for block in loud + calm for item in block]


def wait_for_side_lane(say=print) -> float:
    """Block until the side lane has ended (its runner holds LOCK meanwhile);
    the seconds waited."""
    LOCK.parent.mkdir(parents=True, exist_ok=True)
    began = time.monotonic()
    with LOCK.open("a") as f:
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            say("\n(waiting for the side lane to end: the next module measures the host)")
            fcntl.flock(f, fcntl.LOCK_EX)
        fcntl.flock(f, fcntl.LOCK_UN)
    return time.monotonic() - began


def main(argv: list[str]) -> int:
    paths.RUNS.mkdir(parents=True, exist_ok=True)
    pytest = [sys.executable, "-m", "pytest"]
    with LOCK.open("a") as lock, LOG.open("w") as log:
        fcntl.flock(lock, fcntl.LOCK_EX)  # held for the side lane, released as it ends
        began = time.monotonic()
        side = subprocess.Popen([*pytest, "--lane", "side", *argv], stdout=log,
                                stderr=subprocess.STDOUT, env=os.environ.copy())
        print(f"side lane: pytest --lane side (pid {side.pid}), output in {LOG}", flush=True)
        main_lane = subprocess.Popen([*pytest, "--lane", "main", *argv])
        side_rc = side.wait()
        fcntl.flock(lock, fcntl.LOCK_UN)
        side_s = time.monotonic() - began
        main_rc = main_lane.wait()
    print(f"\n{'=' * 30} side lane ({side_s / 60:.1f} min, exit {side_rc}) {'=' * 30}")
    print(Path(LOG).read_text(errors="replace"), end="")
    print(f"\nlanes: main exit {main_rc}, side exit {side_rc}; "
          f"{(time.monotonic() - began) / 60:.1f} min in all")
    return main_rc or side_rc


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
