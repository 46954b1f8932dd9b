"""The lanes of `make test` on a 2-core machine, each its own pytest process:

- the host lane: every test that boots no guest (unit, UI pilot and
  snapshot tests), spread over HOST_WORKERS processes by pytest-xdist (they
  wait more than they compute: network namespaces, timers, the UI's pilot);
- the side lanes, from the start beside the others: the lab modules that
  name `LANE = "side"` (the upgrade lab: one lab, reboots and installs), one
  process for each name in SIDE_LANES;
- the main lane, once the host lane has ended: every other lab module. One
  whose verdicts measure the host's spare CPU (rates, latency under load,
  CPU cost) names `QUIET_HOST = True`: the main lane runs those last, and
  each waits until the side lanes have ended.

Why not all at once: emulated guests on an overcommitted host burn CPU
waiting for each other (a vCPU spinning for one that is not running). With
the main lane's guests started beside the host lane's workers and the side
lane (and the upgrade edge on 2 vCPUs), a run took 73 CPU-minutes and 44
minutes, against 58 and 39 with the host tests first.

    python -m tests.lab.lanes [pytest arguments] PATHS

The host and side lanes' output goes to out/lab-runs/<lane>-lane.log and is
printed when all have ended; the exit status is the first lane's that
failed. `pytest` run directly (`--lane all`, the default) runs every test in
one process, in the same order."""

from __future__ import annotations

import fcntl
import os
import resource
import subprocess
import sys
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from tests.lab import paths
from tests.lab.lifetime import shared_name

LOCK = paths.RUNS / "side-lane.lock"  # held while the host or a side lane runs
# the lanes that start beside the host lane, each its own process: the lab
# modules naming `LANE = "<name>"`
SIDE_LANES = ("side",)
# xdist workers for the host lane: its tests mostly wait (2.5 CPU-min in 6
# min of one process), so more workers than cores
HOST_WORKERS = 3


def lane_of(module: Any) -> str:
    return getattr(module, "LANE", "main")


def quiet(module: Any) -> bool:
    return bool(getattr(module, "QUIET_HOST", False))


def boots_guests(item: Any) -> bool:
    """A lab test (under tests/vm/), not a host test."""
    return "vm" in Path(str(getattr(item, "path", ""))).parts[-3:-1]


def lane_of_item(item: Any) -> str:
    if not boots_guests(item):
        return "host"
    return lane_of(getattr(item, "module", None))


def select(items: list[Any], lane: str) -> tuple[list[Any], list[Any]]:
    """The items this lane runs, and those it leaves to the others."""
    if lane == "all":
        return items, []
    keep = [i for i in items if lane_of_item(i) == lane]
    return keep, [i for i in items if lane_of_item(i) != lane]


def quiet_last(items: Iterable[Any]) -> list[Any]:
    """Blocks of items (a module, or the modules sharing one lab) in their
    order, those blocks that hold a QUIET_HOST module moved to the end; in
    such a block the modules that do not measure the host come first (after
    any asking for fresh guests), so they run while the other lanes still do."""
    blocks: dict[object, list[Any]] = {}
    for item in items:
        module = getattr(item, "module", None)
        key = shared_name(module) or getattr(module, "__name__", None) or item.nodeid
        blocks.setdefault(key, []).append(item)

    def order(block: list[Any]) -> list[Any]:
        def rank(item: Any) -> int:
            module = getattr(item, "module", None)
            if getattr(module, "SHARED_LAB_FRESH", False):
                return 0
            return 2 if quiet(module) else 1
        return sorted(block, key=rank)

    loud = [b for b in blocks.values() if not any(quiet(getattr(i, "module", None)) for i in b)]
    calm = [order(b) for b in blocks.values() if b not in loud]
    return [item for block in loud + calm for item in block]


def wait_for_side_lane(say=print) -> float:
    """Block until the host and side lanes have ended (their runner holds
    LOCK meanwhile); the seconds waited."""
    LOCK.parent.mkdir(parents=True, exist_ok=True)
    began = time.monotonic()
    with LOCK.open("a") as f:
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            say("\n(waiting for the host and side lanes to end: the next module measures the host)")
            fcntl.flock(f, fcntl.LOCK_EX)
        fcntl.flock(f, fcntl.LOCK_UN)
    return time.monotonic() - began


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def log_of(lane: str) -> Path:
    return paths.RUNS / f"{lane}-lane.log"


def main(argv: list[str]) -> int:
    paths.RUNS.mkdir(parents=True, exist_ok=True)
    pytest = [sys.executable, "-m", "pytest"]
    env = os.environ.copy()
    with LOCK.open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # held for the host and side lanes
        began = time.monotonic()
        logs = {lane: log_of(lane).open("w") for lane in ("host", *SIDE_LANES)}
        procs = {lane: subprocess.Popen([*pytest, "--lane", lane, *argv], stdout=logs[lane],
                                        stderr=subprocess.STDOUT, env=env)
                 for lane in SIDE_LANES}
        procs["host"] = subprocess.Popen([*pytest, "--lane", "host", "-p", "xdist",
                                          "-n", str(HOST_WORKERS), *argv],
                                         stdout=logs["host"], stderr=subprocess.STDOUT, env=env)
        for lane, proc in procs.items():
            how = f" -n {HOST_WORKERS}" if lane == "host" else ""
            print(f"{lane} lane: pytest --lane {lane}{how} (pid {proc.pid}), output in "
                  f"{log_of(lane)}", flush=True)
        # each lane's CPU time (its pytest, its guests, its tools): the
        # children's usage after each wait, in the order the lanes end
        cpu: dict[str, float] = {}
        took: dict[str, float] = {}
        rc: dict[str, int] = {}

        def reap(lane: str) -> None:
            rc[lane] = procs[lane].wait()
            took[lane] = time.monotonic() - began
            cpu[lane] = children_cpu() - sum(cpu.values())
            logs[lane].close()

        reap("host")
        print(f"(host lane ended: {took['host'] / 60:.1f} min, exit {rc['host']}; the main "
              "lane starts)", flush=True)
        procs["main"] = subprocess.Popen([*pytest, "--lane", "main", *argv])
        waiting = list(SIDE_LANES)
        while waiting:
            ended = next((lane for lane in waiting if procs[lane].poll() is not None), None)
            if ended is None:
                time.sleep(1)
                continue
            reap(ended)
            waiting.remove(ended)
        fcntl.flock(lock, fcntl.LOCK_UN)
        rc["main"] = procs["main"].wait()
        took["main"] = time.monotonic() - began
        cpu["main"] = children_cpu() - sum(cpu.values())
    for lane in ("host", *SIDE_LANES):
        print(f"\n{'=' * 30} {lane} lane ({took[lane] / 60:.1f} min, exit {rc[lane]}) "
              f"{'=' * 30}")
        print(log_of(lane).read_text(errors="replace"), end="")
    wall = time.monotonic() - began
    print("\nlanes: " + ", ".join(f"{lane} exit {rc[lane]} ({took[lane] / 60:.1f} min)"
                                  for lane in ("main", "host", *SIDE_LANES))
          + f"; {wall / 60:.1f} min in all")
    print("CPU time (user + system, with guests and tools): "
          + ", ".join(f"{lane} lane {seconds / 60:.1f} min" for lane, seconds in cpu.items())
          + f"; {sum(cpu.values()) / 60:.1f} min in all, "
            f"{sum(cpu.values()) / wall / (os.cpu_count() or 1):.0%} of this machine's "
            f"{os.cpu_count()} cores")
    return next((r for r in (passed(rc[lane]) for lane in ("main", "host", *SIDE_LANES)) if r),
                0)


def passed(rc: int) -> int:
    """A lane's exit status, where a lane with no test of those asked for
    (pytest's 5) has not failed."""
    return 0 if rc == pytest_no_tests else rc


pytest_no_tests = 5


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
