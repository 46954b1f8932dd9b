"""A burstable VPS, as the host throttles it: the guest's QEMU process stopped
and continued on a duty cycle (SIGSTOP / SIGCONT), so the guest gets only a
share of the wall clock, in slices, whatever it asks for. Its own accounting
sees no steal (software emulation reports none) and little load."""

from __future__ import annotations

import contextlib
import os
import signal
import threading
import time
from collections.abc import Iterator


class DutyCycle:
    """Stop `pid` for `stopped_s`, let it run `running_s`, over and over,
    until stopped; always leaves the process running."""

    def __init__(self, pid: int, stopped_s: float = 0.15, running_s: float = 0.10) -> None:
        self.pid, self.stopped_s, self.running_s = pid, stopped_s, running_s
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.started: float | None = None
        self.ended: float | None = None
        self.cycles = 0

    @property
    def share(self) -> float:
        """The share of the wall clock the guest gets."""
        return self.running_s / (self.stopped_s + self.running_s)

    def _run(self) -> None:
        try:
            while not self._stop.is_set():
                os.kill(self.pid, signal.SIGSTOP)
                self._stop.wait(self.stopped_s)
                os.kill(self.pid, signal.SIGCONT)
                self.cycles += 1
                self._stop.wait(self.running_s)
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signal.SIGCONT)

    def start(self) -> None:
        self.started = time.time()
        self._thread = threading.Thread(target=self._run, name="duty-cycle", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self.ended = time.time()


@contextlib.contextmanager
def throttled(pid: int, stopped_s: float = 0.15, running_s: float = 0.10) -> Iterator[DutyCycle]:
    duty = DutyCycle(pid, stopped_s, running_s)
    duty.start()
    try:
        yield duty
    finally:
        duty.stop()
