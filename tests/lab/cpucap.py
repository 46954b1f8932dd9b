"""A guest's QEMU held to a share of one host core, whatever the rest of the
host does: the kernel's CFS bandwidth control (cgroup v2 `cpu.max`, or v1
`cpu.cfs_quota_us`), as a small VPS plan's "40 % of a core" is sold.

A nice value (tests/lab/priority.py) only weighs a guest against the
others: on a host where the others wanted little, the capped guest still got
most of a core. A quota holds on any host. The period is short (10 ms), so
the guest is held back in slices far under its stall meter's starvation
bounds (keel.thresholds.STALL_P99_MS), not in the 150 ms slices of
tests/lab/throttle.py's starving VPS.

Needs root and a cgroup file system with the cpu controller (the lab runs
as root). Where there is none (or it refuses), the guest is held by a duty
cycle instead: its QEMU stopped and continued every 10 ms
(tests/lab/throttle.py), which gives it the same share of the wall clock and
no more; `capped` says which held it."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from tests.lab.throttle import throttled

CGROUP_ROOT = Path("/sys/fs/cgroup")
PERIOD_US = 10_000


class Unavailable(RuntimeError):
    """No cgroup cpu controller this process may use."""


@dataclass(frozen=True)
class Hierarchy:
    root: Path  # where the cap's cgroup is made
    version: int  # 1 or 2


def hierarchy(base: Path = CGROUP_ROOT) -> Hierarchy:
    """The cpu controller's hierarchy: v2 where the unified one has it,
    else v1's (`cpu` or `cpu,cpuacct`)."""
    controllers = base / "cgroup.controllers"
    if controllers.exists() and "cpu" in controllers.read_text().split():
        return Hierarchy(base, 2)
    for name in ("cpu", "cpu,cpuacct", "cpuacct,cpu"):
        if (base / name / "cpu.cfs_quota_us").exists():
            return Hierarchy(base / name, 1)
    raise Unavailable(f"no cgroup cpu controller under {base} (v2 cgroup.controllers "
                      "without cpu, and no v1 cpu hierarchy): the lab cannot cap a guest's CPU")


def _check_share(share: float) -> None:
    if not 0.05 <= share <= 1.0:
        raise ValueError(f"share {share}: must be 0.05..1.0 of a core")


def limit_line(share: float, version: int, period_us: int = PERIOD_US) -> tuple[str, str]:
    """(file, text) that hold a cgroup to `share` of one core."""
    _check_share(share)
    quota = round(share * period_us)
    if version == 2:
        return "cpu.max", f"{quota} {period_us}\n"
    return "cpu.cfs_quota_us", f"{quota}\n"


def _cgroup_of(pid: int, version: int, controller_dir: Path, proc: Path) -> Path:
    """Where `pid` is now, in the hierarchy at `controller_dir`."""
    for line in (proc / str(pid) / "cgroup").read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        names = controllers.split(",")
        if (version == 2 and controllers == "") or (version == 1 and "cpu" in names):
            return controller_dir / path.lstrip("/")
    raise Unavailable(f"process {pid} is in no cgroup of the cpu hierarchy")


@contextlib.contextmanager
def capped(pid: int, share: float, base: Path = CGROUP_ROOT,
           proc: Path = Path("/proc")) -> Iterator[str]:
    """`pid` (every thread of it) held to `share` of one core for the block;
    yields what holds it: a cgroup of its own (moved back where it was, and
    the cgroup removed, afterwards), or where the host has no cgroup cpu
    controller to use, a 10 ms duty cycle (the process always left running)."""
    _check_share(share)  # refused before anything changes
    with contextlib.ExitStack() as stack:
        try:
            how = stack.enter_context(_in_cgroup(pid, share, base, proc))
        except Unavailable as why:
            period = PERIOD_US / 1e6
            stack.enter_context(throttled(pid, period * (1 - share), period * share))
            how = f"stopped and continued every {PERIOD_US // 1000} ms ({why})"
        yield how


@contextlib.contextmanager
def _in_cgroup(pid: int, share: float, base: Path, proc: Path) -> Iterator[str]:
    """capped(), by a cgroup; Unavailable (with nothing left changed) where
    the host has none to use."""
    h = hierarchy(base)
    name, text = limit_line(share, h.version)
    home = _cgroup_of(pid, h.version, h.root, proc)
    group = h.root / f"keel-lab-cap-{pid}"
    try:
        if h.version == 2:
            control = h.root / "cgroup.subtree_control"
            if "cpu" not in control.read_text().split():
                control.write_text("+cpu\n")
        group.mkdir(exist_ok=True)
        if h.version == 1:
            (group / "cpu.cfs_period_us").write_text(f"{PERIOD_US}\n")
        (group / name).write_text(text)
        (group / "cgroup.procs").write_text(f"{pid}\n")
    except ProcessLookupError:
        _remove(group)
        raise
    except OSError as err:
        _remove(group)
        raise Unavailable(f"{group}: {err.strerror or err}") from None
    try:
        yield f"cgroup v{h.version} {name} {text.strip()}"
    finally:
        with contextlib.suppress(ProcessLookupError):
            (home / "cgroup.procs").write_text(f"{pid}\n")
        _remove(group)


def _remove(group: Path) -> None:
    with contextlib.suppress(OSError):
        os.rmdir(group)
