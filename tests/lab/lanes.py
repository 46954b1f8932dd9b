"""The lanes of `make test`, each its own pytest process (docs/lab.md, "Four
lanes", says why each exists and how its numbers were found):

- the host lane: every test that boots no guest (unit, UI pilot and
  snapshot tests), over HOST_WORKERS pytest-xdist workers;
- the side lanes, from the start beside the host lane: the modules of the
  labs whose lane (tests/lab/labs.py) is one of SIDE_LANES;
- once the host lane has ended, side by side:
  - the quiet lane: the modules of the labs of the quiet lane, whose
    verdicts measure the host's spare CPU (tests/lab/marks.py); in each lab
    its other modules first, then those that `measure`, then those that need
    the host to themselves (`host_alone`: they wait until the side and main
    lanes have ended); the labs with no such module first;
  - the main lane: the modules of the main lane's labs.

The quiet lane's guests come first for the host's CPU once booted: the other
lanes' QEMU processes run at higher nice values (GUEST_NICE, through
KEEL_LAB_NICE: tests/lab/priority.py); while booting, every guest runs at
BOOT_NICE (KEEL_LAB_BOOT_NICE), so that no lane's boot starves another's.

    python -m tests.lab.lanes [pytest arguments] PATHS

The main lane prints as it goes; the others' output goes to
out/lab-runs/<lane>-lane.log and is printed when all have ended; the exit
status is the first lane's that failed. `pytest` run directly (`--lane all`,
the default) runs every test in one process, the quiet blocks last."""

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
from tests.lab.marks import traits
from tests.lab.paths import LabError
from tests.lab.priority import BOOT_NICE_ENV, NICE_ENV

# the lanes that start beside the host lane, each its own process: the
# modules of the labs of that lane
SIDE_LANES = ("side",)
# the lanes that start once the host lane has ended
AFTER_HOST = ("main", "quiet")
LANES = ("host", *SIDE_LANES, *AFTER_HOST)
# xdist workers for the host lane: more than cores, its tests mostly wait
HOST_WORKERS = 3
# each lab lane's guests' nice value once booted (the quiet lane's first, the
# side lane's between), and every guest's while it boots
BACKGROUND_NICE = 5
SIDE_NICE = 3
GUEST_NICE = {"quiet": 0, "side": SIDE_NICE, "main": BACKGROUND_NICE}
BOOT_NICE = dict.fromkeys(GUEST_NICE, BACKGROUND_NICE)


LOCK = paths.RUNS / "lanes.lock"  # held by the runner while the side and main lanes run


def quiet(module: Any) -> bool:
    return traits(module).measures


def alone(module: Any) -> bool:
    return traits(module).alone


def boots_guests(item: Any) -> bool:
    """A lab test (under tests/vm/), not a host test."""
    return "vm" in Path(str(getattr(item, "path", ""))).parts[-3:-1]


def alone_labs(items: Iterable[Any], module: Any) -> list[Any]:
    """The first module of each shared lab that a host_alone module after
    `module` among `items` uses, `module`'s own lab left out: the labs that
    can boot while `module` waits for the host to itself."""
    mine, seen, out, after = shared_name(module), set(), [], False
    for item in items:
        other = getattr(item, "module", None)
        after = after or other is module
        name = shared_name(other)
        if after and alone(other) and name is not None and name != mine and name not in seen:
            seen.add(name)
            out.append(other)
    return out


def lane_of_item(item: Any) -> str:
    """The lane that runs `item`: the host lane for a test that boots no
    guest, else its lab's (a lab test naming no lab is an error)."""
    if not boots_guests(item):
        return "host"
    module = getattr(item, "module", None)
    lab = traits(module).lab
    if lab is None:
        raise LabError(f"{getattr(module, '__name__', item.nodeid)}: a lab test module names "
                       "its lab: pytestmark = pytest.mark.lab(<a name in tests/lab/labs.py>)")
    return lab.lane


def select(items: list[Any], lane: str) -> tuple[list[Any], list[Any]]:
    """The items this lane runs, and those it leaves to the others."""
    if lane == "all":
        return items, []
    keep = [i for i in items if lane_of_item(i) == lane]
    return keep, [i for i in items if lane_of_item(i) != lane]


def quiet_last(items: Iterable[Any]) -> list[Any]:
    """Blocks of items (a module, or the modules sharing one lab) in their
    order, those blocks that hold a module that `measures` moved to the end,
    and after them those holding a `host_alone` one; in such a block the modules
    asking for fresh guests come first, then those that do not measure the
    host, then the quiet ones, then those that need the host alone."""
    blocks: dict[object, list[Any]] = {}
    for item in items:
        module = getattr(item, "module", None)
        key = shared_name(module) or getattr(module, "__name__", None) or item.nodeid
        blocks.setdefault(key, []).append(item)

    def rank(item: Any) -> int:
        module = getattr(item, "module", None)
        if traits(module).fresh:
            return 0
        return 3 if alone(module) else 2 if quiet(module) else 1

    def weight(block: list[Any]) -> int:
        return max(0 if r == 1 else r for r in map(rank, block))

    ordered = sorted(blocks.values(), key=weight)  # (stable: loud blocks keep their order)
    return [item for block in ordered
            for item in (block if weight(block) == 0 else sorted(block, key=rank))]


def wait_for_other_lanes(say=print) -> float:
    """Block until the side and main lanes have ended (their runner holds
    LOCK meanwhile; with no runner, at once); the seconds waited."""
    LOCK.parent.mkdir(parents=True, exist_ok=True)
    began = time.monotonic()
    with LOCK.open("a") as f:
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            say("\n(waiting for the side and main lanes to end: the next module needs the "
                "host alone)")
            fcntl.flock(f, fcntl.LOCK_EX)
        fcntl.flock(f, fcntl.LOCK_UN)
    return time.monotonic() - began


def lane_env(lane: str, env: dict[str, str] | None = None) -> dict[str, str]:
    """The environment of a lane's pytest: its guests' nice values."""
    out = dict(os.environ if env is None else env)
    if lane in GUEST_NICE:
        out[NICE_ENV] = str(GUEST_NICE[lane])
        out[BOOT_NICE_ENV] = str(BOOT_NICE[lane])
    return out


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def log_of(lane: str) -> Path:
    return paths.RUNS / f"{lane}-lane.log"


def main(argv: list[str]) -> int:
    paths.RUNS.mkdir(parents=True, exist_ok=True)
    pytest = [sys.executable, "-m", "pytest"]
    began = time.monotonic()
    logged = [lane for lane in LANES if lane != "main"]  # main prints as it goes
    logs = {lane: log_of(lane).open("w") for lane in logged}
    procs: dict[str, subprocess.Popen] = {}
    lock = LOCK.open("a")
    fcntl.flock(lock, fcntl.LOCK_EX)  # until the side and main lanes have ended

    def start(lane: str, *extra: str) -> None:
        out = logs.get(lane)
        procs[lane] = subprocess.Popen([*pytest, "--lane", lane, *extra, *argv],
                                       stdout=out, stderr=subprocess.STDOUT if out else None,
                                       env=lane_env(lane))
        how = f" {' '.join(extra)}" if extra else ""
        where = f", output in {log_of(lane)}" if out else ""
        nice = (f", its guests at nice {GUEST_NICE[lane]} (booting: {BOOT_NICE[lane]})"
                if lane in GUEST_NICE else "")
        print(f"{lane} lane: pytest --lane {lane}{how} (pid {procs[lane].pid}){nice}{where}",
              flush=True)

    for lane in SIDE_LANES:
        start(lane)
    start("host", "-p", "xdist", "-n", str(HOST_WORKERS))
    # each lane's CPU time (its pytest, its guests, its tools): the children's
    # usage after each wait, in the order the lanes end
    cpu: dict[str, float] = {}
    took: dict[str, float] = {}
    rc: dict[str, int] = {}

    def reap(lane: str) -> None:
        rc[lane] = procs[lane].wait()
        took[lane] = time.monotonic() - began
        cpu[lane] = children_cpu() - sum(cpu.values())
        if lane in logs:
            logs[lane].close()

    reap("host")
    print(f"(host lane ended: {took['host'] / 60:.1f} min, exit {rc['host']}; the main and "
          "quiet lanes start)", flush=True)
    for lane in AFTER_HOST:
        start(lane)
    waiting = [*SIDE_LANES, *AFTER_HOST]
    while waiting:
        ended = next((lane for lane in waiting if procs[lane].poll() is not None), None)
        if ended is None:
            time.sleep(1)
            continue
        reap(ended)
        waiting.remove(ended)
        print(f"({ended} lane ended: {took[ended] / 60:.1f} min, exit {rc[ended]})", flush=True)
        if not set(waiting) & {*SIDE_LANES, "main"} and not lock.closed:
            fcntl.flock(lock, fcntl.LOCK_UN)  # the quiet lane's host_alone modules go on
            lock.close()
    for lane in logged:
        print(f"\n{'=' * 30} {lane} lane ({took[lane] / 60:.1f} min, exit {rc[lane]}) "
              f"{'=' * 30}")
        print(log_of(lane).read_text(errors="replace"), end="")
    wall = time.monotonic() - began
    print("\nlanes: " + ", ".join(f"{lane} exit {rc[lane]} ({took[lane] / 60:.1f} min)"
                                  for lane in LANES)
          + f"; {wall / 60:.1f} min in all")
    print("CPU time (user + system, with guests and tools): "
          + ", ".join(f"{lane} lane {seconds / 60:.1f} min" for lane, seconds in cpu.items())
          + f"; {sum(cpu.values()) / 60:.1f} min in all, "
            f"{sum(cpu.values()) / wall / (os.cpu_count() or 1):.0%} of this machine's "
            f"{os.cpu_count()} cores")
    return next((r for r in (passed(rc[lane]) for lane in LANES) if r), 0)


def passed(rc: int) -> int:
    """A lane's exit status, where a lane with no test of those asked for
    (pytest's 5) has not failed."""
    return 0 if rc == pytest_no_tests else rc


pytest_no_tests = 5


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
