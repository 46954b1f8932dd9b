"""Helpers of the UI tests: the lab captures behind a FixtureSource,
"before" reads derived from them so that the second poll gives known deltas."""

from __future__ import annotations

import asyncio
import functools
import json
from pathlib import Path

from keel.metrics.collectors import CakeCollector, CpuCollector, TuningCollector, TunnelCollector
from keel.metrics.latency import FakeProbe, LatencyCollector
from keel.system.qdiscs import tc_qdisc_argv
from keel.system.source import FixtureSource
from keel.system.wireguard import WG_DUMP
from keel.ui.profile import CONSOLE

LAB = Path(__file__).resolve().parents[1] / "fixtures" / "lab"
HANDSHAKE = 1795343519  # latest-handshake in wg-show-all-dump.txt
NOW = HANDSHAKE + 12.0  # the tests' wall clock: handshake 12 s ago
CRYPT_SHIFT = 20  # ticks each busy wg-crypt worker ran between the reads
WG_RX, WG_TX = 30_000_000, 10_000_000  # bytes through wg0 between the reads
CAKE_EGRESS, CAKE_INGRESS = 2_500_000, 5_000_000  # bytes through each CAKE in 1 s


def lab(name: str) -> str:
    return (LAB / name).read_text()


class StepClock:
    """start, start+step, start+2*step, ... (one tick per call)."""

    def __init__(self, start: float = 1000.0, step: float = 1.0) -> None:
        self.t, self.step = start - step, step

    def __call__(self) -> float:
        self.t += self.step
        return self.t


def shift_stime(line: str, ticks: int) -> str:
    """A /proc/<pid>/stat line with stime (field 15) moved by `ticks`."""
    head, _, rest = line.rpartition(") ")
    fields = rest.split()
    fields[12] = str(max(0, int(fields[12]) + ticks))
    return f"{head}) {' '.join(fields)}"


def fixture_files(stats: list[str] | None = None) -> dict[str, str | list[str]]:
    files: dict[str, str | list[str]] = {
        "/proc/stat": stats or [lab("proc-stat-before.txt"), lab("proc-stat-after.txt")],
        "/proc/cpuinfo": lab("cpuinfo-mhz.txt"),
        "/proc/uptime": ["100.00 180.00\n", "105.00 189.00\n"],  # the workers are older
        "/sys/devices/system/cpu/cpuidle/current_driver": "none\n",
        "/sys/class/net/eth0/uevent": "INTERFACE=eth0\n",
        "/sys/class/net/wg0/uevent": "DEVTYPE=wireguard\nINTERFACE=wg0\n",
        "/sys/class/net/wg0/statistics/rx_bytes": ["1000000", str(1_000_000 + WG_RX)],
        "/sys/class/net/wg0/statistics/tx_bytes": ["2000000", str(2_000_000 + WG_TX)],
        "/sys/class/net/wg0/statistics/rx_packets": ["1000", "26000"],
        "/sys/class/net/wg0/statistics/tx_packets": ["2000", "11000"],
    }
    for line in lab("wg-crypt-stat.txt").splitlines():
        pid = line.split()[0]
        busy = int(line.rpartition(") ")[2].split()[12]) >= CRYPT_SHIFT
        files[f"/proc/{pid}/stat"] = [shift_stime(line, -CRYPT_SHIFT if busy else 0), line]
    return files


def tc_before_after() -> list[str]:
    after = json.loads(lab("tc-qdisc.json"))
    before = json.loads(lab("tc-qdisc.json"))
    for q in before:
        if q.get("kind") == "cake":
            q["bytes"] -= CAKE_EGRESS if q["dev"] == "eth0" else CAKE_INGRESS
    return [json.dumps(before), json.dumps(after)]


def wg_before_after() -> list[str]:
    after = lab("wg-show-all-dump.txt")
    before = after.replace("\t25753676\t18544440\t",
                           f"\t{25753676 - 1_250_000}\t{18544440 - 500_000}\t")
    return [before, after]


def fixture_source(stats: list[str] | None = None) -> FixtureSource:
    return FixtureSource(fixture_files(stats), {WG_DUMP: wg_before_after(),
                                                tuple(tc_qdisc_argv()): tc_before_after()})


def fixture_collectors(source: FixtureSource | None = None, loss_every: int = 7) -> dict:
    def src() -> FixtureSource:  # one each unless given: the lists of reads stay per collector
        return source or fixture_source()

    probes = [FakeProbe("tunnel", "10.99.0.2", base_ms=4.8, load_ms=30, period=8,
                        loss_every=loss_every),
              FakeProbe("outside", "192.0.2.2", base_ms=3.1)]
    return {
        "tunnel": TunnelCollector(src(), clock=StepClock(), wallclock=lambda: NOW),
        "cpu": CpuCollector(src(), hz=100),
        "cake": CakeCollector(src(), clock=StepClock()),
        "tuning": TuningCollector(src(), pm_qos=lambda: None),
        "latency": LatencyCollector(probes, wallclock=StepClock(NOW, 1.0)),
    }


SLOW = dict.fromkeys(("tunnel", "cpu", "cake", "tuning", "latency"), 3600.0)


def make_app(profile=CONSOLE, collectors=None, **kwargs):
    from keel.ui.app import KeelApp
    from keel.ui.selftest import FakeSelfTestRunner

    kwargs.setdefault("runner", FakeSelfTestRunner())
    kwargs.setdefault("intervals", SLOW)
    kwargs.setdefault("password_delay", 0.0)
    return KeelApp(collectors or fixture_collectors(), profile, **kwargs)


async def settle(pilot) -> None:
    """Let every poll worker finish and its message be shown."""
    for _ in range(3):
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()


async def two_polls(pilot) -> None:
    await settle(pilot)
    await pilot.press("r")
    await settle(pilot)


def screen_lines(app) -> list[str]:
    strips = app.screen._compositor.render_strips()
    return ["".join(seg.text for seg in strip).rstrip() for strip in strips]


def asynctest(fn):
    """Run an async test with asyncio (no pytest-asyncio on the appliance's CI)."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return asyncio.run(fn(*args, **kwargs))
    return wrapper
