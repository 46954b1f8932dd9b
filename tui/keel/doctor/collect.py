"""Reading what the doctor checks from the running system."""

from __future__ import annotations

import contextlib
import gzip
import json
import os
import time
from pathlib import Path

from keel.kernel_features import runtime_presence
from keel.parse import procstat, tcqdisc, wgdump
from keel.system.commands import Runner
from keel.tuning.cpu import CpuTuning, read_tuning


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
    before = procstat.parse_proc_stat(Path("/proc/stat").read_text())
    time.sleep(seconds)
    after = procstat.parse_proc_stat(Path("/proc/stat").read_text())
    return procstat.shares(before, after)


def qdiscs(runner: Runner) -> list[tcqdisc.Qdisc]:
    proc = runner.run(["tc", "-s", "-j", "qdisc", "show"], check=False)
    return tcqdisc.parse_qdiscs(json.loads(proc.stdout or "[]"))


def wireguard(runner: Runner) -> dict[str, wgdump.WgInterface]:
    proc = runner.run(["wg", "show", "all", "dump"], check=False)
    return wgdump.parse_wg_dump(proc.stdout) if proc.returncode == 0 else {}


def mtus(runner: Runner) -> dict[str, int]:
    proc = runner.run(["ip", "-j", "link", "show"], check=False)
    return {link["ifname"]: link.get("mtu", 0) for link in json.loads(proc.stdout or "[]")}


def tuning() -> CpuTuning:
    return read_tuning()
