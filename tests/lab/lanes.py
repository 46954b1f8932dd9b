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
    the host to themselves (`host_alone`: they wait until the runner has
    moved the side and main lanes into an idle CPU group, tests/lab/idle_group.py,
    or until those have ended where it cannot); the labs with no such module
    first;
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

from tests.lab import labs, paths
from tests.lab.idle_group import IdleGroup, NoIdleGroup
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
GUEST_NICE = {"quiet": 0, **dict.fromkeys(SIDE_LANES, SIDE_NICE), "main": BACKGROUND_NICE}
BOOT_NICE = dict.fromkeys(GUEST_NICE, BACKGROUND_NICE)


# held by the runner until the host is the quiet lane's (the side and main
# lanes stepped aside or ended), and until they have ended
LOCK = paths.RUNS / "lanes.lock"
ENDED = paths.RUNS / "lanes-ended.lock"
# made by the quiet lane when a host_alone module waits for the host: the
# runner then moves the side and main lanes into an idle CPU group
WANTED = paths.RUNS / "host-wanted"
IDLE_GROUP = "keel-lab-idle"


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


def lab_rank(item: Any) -> int:
    """Where `item`'s lab stands in tests/lab/labs.py's table (-1: no lab)."""
    lab = traits(getattr(item, "module", None)).lab
    return -1 if lab is None else list(labs.TOPOLOGIES).index(lab.name)


def select(items: list[Any], lane: str) -> tuple[list[Any], list[Any]]:
    """The items this lane runs, and those it leaves to the others; a lab
    lane runs its labs in the table's order (tests/lab/labs.py)."""
    if lane == "all":
        return items, []
    keep = [i for i in items if lane_of_item(i) == lane]
    if lane != "host":
        keep.sort(key=lab_rank)  # (stable: a lab's modules keep their order)
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


def wait_for_other_lanes(say=print, *, ended: bool = False) -> float:
    """Block until the host is this lane's: the runner (which holds LOCK
    while the side and main lanes run) lets go once it has moved them into an
    idle CPU group (asked by WANTED), or once they have ended where it
    cannot; `ended`: until they have ended (ENDED). With no runner, at once.
    The seconds waited."""
    LOCK.parent.mkdir(parents=True, exist_ok=True)
    began = time.monotonic()
    with (ENDED if ended else LOCK).open("a") as f:
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            if not ended:
                WANTED.touch()
            say("\n(waiting for the host: the next module needs it to itself; the side and "
                + ("main lanes end)" if ended else "main lanes step aside, or end)"))
            fcntl.flock(f, fcntl.LOCK_EX)
        fcntl.flock(f, fcntl.LOCK_UN)
    WANTED.unlink(missing_ok=True)
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
    lock, ended_lock = LOCK.open("a"), ENDED.open("a")
    fcntl.flock(lock, fcntl.LOCK_EX)  # until the host is the quiet lane's
    fcntl.flock(ended_lock, fcntl.LOCK_EX)  # until the side and main lanes have ended
    WANTED.unlink(missing_ok=True)
    idle: IdleGroup | None = None

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
    stepping_aside = [*SIDE_LANES, "main"]

    def let_go(why: str) -> None:
        fcntl.flock(lock, fcntl.LOCK_UN)  # the quiet lane's host_alone modules go on
        lock.close()
        print(f"(the quiet lane has the host from {(time.monotonic() - began) / 60:.1f} min: "
              f"{why})", flush=True)

    try:
        while waiting:
            aside = [procs[lane].pid for lane in waiting if lane in stepping_aside]
            if idle is not None:
                idle.sweep(aside)  # (a process forked while the last sweep read /proc)
            elif WANTED.exists() and not lock.closed and aside:
                try:
                    idle = IdleGroup.make(IDLE_GROUP)
                    idle.sweep(aside)
                    let_go(f"the {' and '.join(x for x in waiting if x in stepping_aside)} "
                           f"lanes take only idle CPU time now ({idle.path})")
                except NoIdleGroup as err:
                    WANTED.unlink(missing_ok=True)
                    print(f"(no idle CPU group: {err}; the quiet lane waits for the side "
                          "and main lanes to end)", flush=True)
            ended = next((lane for lane in waiting if procs[lane].poll() is not None), None)
            if ended is None:
                time.sleep(1)
                continue
            reap(ended)
            waiting.remove(ended)
            print(f"({ended} lane ended: {took[ended] / 60:.1f} min, exit {rc[ended]})",
                  flush=True)
            if ended == "quiet" and idle is not None:
                idle.release()  # the measuring is over: the lanes left weigh as before
                idle = None
            if not set(waiting) & set(stepping_aside) and not ended_lock.closed:
                fcntl.flock(ended_lock, fcntl.LOCK_UN)
                ended_lock.close()
                if not lock.closed:
                    let_go("the side and main lanes have ended")
    finally:
        if idle is not None:
            idle.release()
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
