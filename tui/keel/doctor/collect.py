"""Reading what the doctor checks from the running system."""

from __future__ import annotations

import json
import time

from keel.parse import procstat
from keel.parse.tcqdisc import Qdisc
from keel.parse.wgdump import WgInterface
from keel.system.commands import Runner
from keel.system.cpu_sysfs import CpuTuning, read_tuning
from keel.system.cpu_times import read_cpu_times
from keel.system.qdiscs import read_qdiscs
from keel.system.source import RunnerSource, SourceError
from keel.system.wireguard import read_wireguard


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
