"""The stall meter: one thread per online CPU, pinned to it and (if allowed)
at SCHED_FIFO priority 1, sleeping 10 ms at a time and noting how late each
sleep comes back.

At real-time priority an ordinary busy process cannot delay the thread: only
the hypervisor descheduling the vCPU (or the kernel running with interrupts
off) can. That catches the "starving VPS" even where the hypervisor reports no
steal time. Run it in a process of its own (`keel stall-meter`): in a busy
Python process the GIL would add its own lateness (up to the 5 ms switch
interval).

Cost: one wakeup per CPU per 10 ms; the loop allocates nothing beyond the
float appended to the current second's list, and logs nothing.
"""

from __future__ import annotations

import math
import os
import threading
import time
from collections.abc import Callable, Iterable, Iterator

from keel.stall.summary import StallSecond, summarise
from keel.system.cpu_times import PROC_STAT, proc_stat_text

# seconds slept per sample: 25 wakeups a second per CPU, few enough to keep the
# meter under 0.5 % of a core (`make bench` measures it), many enough to see a
# 50 ms stall (the threshold, keel.thresholds)
PERIOD = 0.040
STAT_PATH = PROC_STAT


def online_cpus() -> list[int]:
    return sorted(os.sched_getaffinity(0))


class StallMeter:
    """meter = StallMeter(); meter.start(); for second in meter.seconds(stop): ...

    Threads are daemons; stop() asks them to end (within one PERIOD)."""

    def __init__(self, cpus: Iterable[int] | None = None, *, period: float = PERIOD,
                 realtime: bool = True, stat_path: str = STAT_PATH) -> None:
        self.cpus = sorted(cpus) if cpus is not None else online_cpus()
        self.period = period
        self.want_realtime = realtime
        self.stat_path = stat_path
        # slot i collects CPU cpus[i]'s lateness for the current second; the
        # collector swaps in a fresh list (a sample appended during the swap may
        # land in the old list after it was read: at most one lost per second)
        self._late: list[list[float]] = [[] for _ in self.cpus]
        self._before: list[list[float]] = [[] for _ in self.cpus]  # the last second's
        # when each thread last woke (monotonic): a stall still going on shows
        # as a thread that has not woken for longer than its period
        self._woke: list[float] = [time.monotonic() for _ in self.cpus]
        self._got_realtime: list[bool] = [False for _ in self.cpus]
        self._pinned: list[bool] = [False for _ in self.cpus]
        self._ready = threading.Barrier(len(self.cpus) + 1)
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []

    @property
    def realtime(self) -> bool:
        """Every thread runs at SCHED_FIFO (known once start() returned)."""
        return bool(self._got_realtime) and all(self._got_realtime)

    @property
    def pinned(self) -> bool:
        return bool(self._pinned) and all(self._pinned)

    def start(self) -> None:
        for slot, cpu in enumerate(self.cpus):
            thread = threading.Thread(target=self._run, args=(slot, cpu), daemon=True,
                                      name=f"stall-cpu{cpu}")
            thread.start()
            self._threads.append(thread)
        self._ready.wait()

    def stop(self, timeout: float = 1.0) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join(timeout)

    def _settle(self, slot: int, cpu: int) -> None:
        """Pin the calling thread to its CPU and ask for SCHED_FIFO 1 (on Linux
        pid 0 is the calling thread); keep going without either if refused."""
        try:
            os.sched_setaffinity(0, {cpu})
            self._pinned[slot] = True
        except OSError:
            pass
        if self.want_realtime:
            try:
                os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(1))
                self._got_realtime[slot] = True
            except OSError:  # PermissionError included: run at normal priority
                pass

    def _run(self, slot: int, cpu: int) -> None:
        try:
            self._settle(slot, cpu)
        finally:
            self._ready.wait()
        late = self._late
        stop = self._stop
        period = self.period
        monotonic = time.monotonic
        sleep = time.sleep
        woke = self._woke
        while not stop.is_set():
            t0 = monotonic()
            sleep(period)
            t1 = woke[slot] = monotonic()
            lateness = t1 - t0 - period
            late[slot].append(lateness if lateness > 0.0 else 0.0)

    def take(self) -> dict[int, list[float]]:
        """This second's samples per CPU; the threads start on fresh lists."""
        taken: dict[int, list[float]] = {}
        for slot, cpu in enumerate(self.cpus):
            taken[cpu] = self._before[slot] = self._late[slot]
            self._late[slot] = []
        return taken

    def recent_ms(self, samples: int = 8) -> float:
        """How late the CPU was given back just now (ms): the worst of each
        thread's last `samples` wake-ups (8 x 40 ms: about a third of a
        second), or the time a thread has overslept so far, if more."""
        now = time.monotonic()
        worst = 0.0
        for slot in range(len(self.cpus)):
            recent = self._late[slot][-samples:]
            if len(recent) < samples:
                recent = self._before[slot][-(samples - len(recent)):] + recent
            overslept = now - self._woke[slot] - self.period
            worst = max(worst, overslept, *recent)
        return worst * 1000.0

    def seconds(self, stop: threading.Event | None = None,
                count: int | None = None) -> Iterator[StallSecond]:
        """One StallSecond per second, aligned to the meter's own start, until
        `stop` is set or `count` seconds were given. A second the collector
        itself missed (it was starved too) is folded into the next one."""
        stop = stop or threading.Event()
        start = time.monotonic()
        before = proc_stat_text(path=self.stat_path)
        self.take()  # what the threads noted while starting belongs to no second
        last = start
        given = 0
        k = 1
        while count is None or given < count:
            if stop.wait(max(0.0, start + k - time.monotonic())):
                return
            now = time.monotonic()
            after = proc_stat_text(path=self.stat_path)
            late = self.take()
            yield summarise(late, before, after, now - last, t=time.time(),
                            realtime=self.realtime)
            given += 1
            before, last = after, now
            k = max(k + 1, math.floor(now - start) + 1)


def run(on_second: Callable[[StallSecond], None], *, seconds: int | None = None,
        stop: threading.Event | None = None, cpus: Iterable[int] | None = None,
        realtime: bool = True, period: float = PERIOD, reflect: bool = False) -> bool:
    """Run a meter, handing each second to on_second; returns whether it ran at
    real-time priority. `reflect`: answer keel's delay probes from the tunnels
    meanwhile (keel.adaptive.reflector), with this meter's recent stall."""
    meter = StallMeter(cpus, realtime=realtime, period=period)
    meter.start()
    if reflect:
        from keel.adaptive import reflector

        done = threading.Event()
        reflector.start(meter.recent_ms, done)
    try:
        for second in meter.seconds(stop, seconds):
            on_second(second)
    finally:
        meter.stop()
        if reflect:
            done.set()
    return meter.realtime
