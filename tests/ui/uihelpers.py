"""Helpers of the UI tests: the lab captures behind a FixtureSource,
"before" reads derived from them so that the second poll gives known deltas."""

from __future__ import annotations

import asyncio
import contextlib
import functools
from pathlib import Path

from textual.worker import WorkerCancelled

from keel.access.password import PasswordStore
from keel.access.ssh_keys import KeyStore
from keel.metrics.collectors import CakeCollector, CpuCollector, TuningCollector, TunnelCollector
from keel.metrics.latency import FakeProbe, LatencyCollector
from keel.metrics.verdict import VerdictCollector
from keel.parse.ping import LatencySample
from keel.stall.summary import CpuStall, StallSecond
from keel.system.source import FixtureSource
from keel.ui.profile import CONSOLE
from keel.ui.shell import RootShell
from keel.upgrade.record import Records
from tests.fixtures.sources import NOW, fixture_source


class StepClock:
    """start, start+step, start+2*step, ... (one tick per call)."""

    def __init__(self, start: float = 1000.0, step: float = 1.0) -> None:
        self.t, self.step = start - step, step

    def __call__(self) -> float:
        self.t += self.step
        return self.t


def fixture_collectors(source: FixtureSource | None = None, loss_every: int = 7) -> dict:
    def src() -> FixtureSource:  # one each unless given: the lists of reads stay per collector
        return source or fixture_source()

    probes = [FakeProbe("tunnel", "10.99.0.2", base_ms=4.8, load_ms=30, period=8,
                        loss_every=loss_every),
              FakeProbe("outside", "192.0.2.2", base_ms=3.1)]
    collectors = {
        "tunnel": TunnelCollector(src(), clock=StepClock(), wallclock=lambda: NOW),
        "cpu": CpuCollector(src(), hz=100),
        "cake": CakeCollector(src(), clock=StepClock()),
        "tuning": TuningCollector(src(), pm_qos=lambda: None),
        "latency": LatencyCollector(probes, wallclock=StepClock(NOW, 1.0)),
    }
    collectors["verdict"] = VerdictCollector(collectors, src(), stall=lambda: STALL,
                                             wallclock=StepClock(NOW, 1.0))
    return collectors


class LateProbe:
    """A probe that was on time until its first drain (`idle_s` seconds of
    samples at `idle_ms`, at 5 Hz) and is `late_ms` from then on."""

    def __init__(self, name: str, target: str, idle_ms: float, late_ms: float,
                 idle_s: float = 20.0) -> None:
        self.name, self.target = name, target
        self.idle_ms, self.late_ms, self.idle_s = idle_ms, late_ms, idle_s
        self._next: float | None = None

    def start(self) -> None:
        pass

    def stop(self) -> None:
        pass

    def drain(self, now: float) -> list[LatencySample]:
        first = self._next is None
        t = now - self.idle_s if self._next is None else self._next
        out = []
        while t <= now:
            out.append(LatencySample(t, self.idle_ms if first else self.late_ms))
            t += 0.2
        self._next = t
        return out


def tunnel_only_collectors() -> dict:
    """The fixtures, with the tunnel's probe 36 ms over its idle baseline from
    the second poll on and the probe outside it 7.5 ms over (issue 21's case)."""
    collectors = fixture_collectors()
    collectors["latency"] = LatencyCollector(
        [LateProbe("tunnel", "10.99.0.2", 20.0, 56.0),
         LateProbe("outside", "192.0.2.2", 3.5, 11.0)],
        wallclock=StepClock(NOW, 1.0))
    return collectors


NOWHERE = Path("/nonexistent-keel-test")
SLOW = dict.fromkeys(("tunnel", "cpu", "cake", "tuning", "latency", "verdict"), 3600.0)
# the stall meter's second the fixture shows: a healthy CPU
STALL = StallSecond(NOW, (CpuStall(0, 100, 0.2, 0.4, 15.0), CpuStall(1, 100, 0.3, 1.2, 21.0)),
                    0.3, 1.2, 36.0, 0.0, True)


def make_app(profile=CONSOLE, collectors=None, **kwargs):
    from keel.ui.app import KeelApp
    from keel.ui.selftest import FakeSelfTestRunner

    kwargs.setdefault("runner", FakeSelfTestRunner())
    kwargs.setdefault("intervals", SLOW)
    kwargs.setdefault("password_delay", 0.0)
    # no shadow to read: the first boot's password question is not asked
    kwargs.setdefault("passwords", PasswordStore(NOWHERE / "access", NOWHERE / "shadow",
                                                 mount=False, locked_note=NOWHERE / "locked"))
    kwargs.setdefault("key_store", KeyStore(NOWHERE / "access"))
    kwargs.setdefault("upgrade_records", Records(NOWHERE / "upgrade"))
    return KeelApp(collectors or fixture_collectors(), profile, **kwargs)


async def settle(pilot) -> None:
    """Let every poll worker finish and its message be shown. A worker
    cancelled meanwhile (an exclusive poll replaced by the next one, as the
    forwards screen's) has finished too: under load one was, and waiting
    for it raised WorkerCancelled."""
    for _ in range(3):
        for worker in list(pilot.app.workers):
            with contextlib.suppress(WorkerCancelled):
                await worker.wait()
        while getattr(pilot.app.screen, "polling", False):  # the screen's poll thread
            await asyncio.sleep(0.005)
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


# --- the root shell: a fake crypt and a shell that only counts ---------------

def fake_hasher(password: str, setting: str) -> str:
    return setting if password == "s3cret" else "$6$salt$wrong"


class RecordingShell(RootShell):
    launched = 0

    def launch(self) -> int:
        self.launched += 1
        return 0


def shell_with(tmp_path, field: str) -> RecordingShell:
    shadow = tmp_path / "shadow"
    shadow.write_text(f"root:{field}:19000:0:99999:7:::\nnobody:*:19000::::::\n")
    return RecordingShell(str(shadow), hasher=fake_hasher)
