"""Reading what the doctor checks from the running system."""

from __future__ import annotations

import contextlib
import gzip
import json
import os
import time
from pathlib import Path

from keel.kernel_features import runtime_presence
from keel.parse import procstat
from keel.parse.tcqdisc import Qdisc
from keel.parse.wgdump import WgInterface
from keel.system.commands import Runner
from keel.system.cpu_sysfs import CpuTuning, read_tuning
from keel.system.cpu_times import read_cpu_times
from keel.system.qdiscs import read_qdiscs
from keel.system.source import RunnerSource, SourceError
from keel.system.wireguard import read_wireguard


def kernel_feature_presence(root: Path = Path("/"), release: str | None = None
                            ) -> dict[str, bool]:
    """The router's kernel features (keel.kernel_features, the one list) on the
    running kernel: from /proc/config.gz where the kernel has it, else from the
    module lists (built in, installed, loaded)."""
    release = release or os.uname().release
    moddir = root / "lib" / "modules" / release

    def read(path: Path) -> str:
        try:
            return path.read_text()
        except OSError:
            return ""

    config = ""
    with contextlib.suppress(OSError):
        config = gzip.decompress((root / "proc/config.gz").read_bytes()).decode()
    return runtime_presence(config or None, modules_builtin=read(moddir / "modules.builtin"),
                            modules_dep=read(moddir / "modules.dep"),
                            proc_modules=read(root / "proc/modules"))


def steal_over(seconds: float) -> dict[str, procstat.CpuShare]:
    before = read_cpu_times()
    time.sleep(seconds)
    return procstat.shares(before, read_cpu_times())


def qdiscs(runner: Runner) -> list[Qdisc]:
    try:
        return read_qdiscs(RunnerSource(runner))
    except SourceError:
        return []


def wireguard(runner: Runner) -> dict[str, WgInterface]:
    try:
        return read_wireguard(RunnerSource(runner))
    except SourceError:
        return {}


def mtus(runner: Runner) -> dict[str, int]:
    proc = runner.run(["ip", "-j", "link", "show"], check=False)
    return {link["ifname"]: link.get("mtu", 0) for link in json.loads(proc.stdout or "[]")}


def tuning() -> CpuTuning:
    return read_tuning()
