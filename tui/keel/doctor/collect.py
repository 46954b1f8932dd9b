"""Reading what the doctor checks from the running system."""

from __future__ import annotations

import contextlib
import json
import os
import time
from pathlib import Path

from keel.parse import procstat, tcqdisc, wgdump
from keel.system.commands import Runner
from keel.tuning.cpu import CpuTuning, read_tuning

# The modules the router loads (also built in, on the release kernel).
ROUTER_MODULES = ("wireguard", "sch_cake", "ifb", "act_mirred", "cls_matchall", "nf_tables",
                  "nft_nat", "nft_masq", "nft_ct", "sch_fq_codel")


def kernel_module_presence(modules: tuple[str, ...] = ROUTER_MODULES,
                           release: str | None = None,
                           root: Path = Path("/")) -> dict[str, bool]:
    """Each module: loaded, built in, or installed for this kernel."""
    release = release or os.uname().release
    moddir = root / "lib" / "modules" / release
    names: set[str] = set()
    for listing in ("modules.builtin", "modules.dep"):
        try:
            text = (moddir / listing).read_text()
        except OSError:
            continue
        for line in text.splitlines():
            path = line.split(":", 1)[0]
            names.add(Path(path).name.split(".ko")[0].replace("-", "_"))
    with contextlib.suppress(OSError):
        names |= {line.split()[0] for line in (root / "proc/modules").read_text().splitlines()}
    return {module: module in names for module in modules}


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
