"""The processes a self-test starts (iperf3, ping): always stopped at the end,
also on Ctrl-C or when the UI that ran the test goes away."""

from __future__ import annotations

import contextlib
import signal
import subprocess
import threading
from collections.abc import Sequence


class Processes:
    """Starts children in their own process group and kills them all on close."""

    def __init__(self) -> None:
        self._procs: list[subprocess.Popen] = []
        self._lock = threading.Lock()

    def start(self, argv: Sequence[str]) -> subprocess.Popen:
        proc = subprocess.Popen(list(argv), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                stdin=subprocess.DEVNULL, text=True, start_new_session=True)
        with self._lock:
            self._procs.append(proc)
        return proc

    def stop(self, proc: subprocess.Popen) -> None:
        if proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                proc.send_signal(signal.SIGINT)  # iperf3 and ping print their summary
            try:
                proc.wait(timeout=3)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()

    def close(self) -> None:
        with self._lock:
            procs, self._procs = self._procs, []
        for proc in procs:
            self.stop(proc)

    def __enter__(self) -> Processes:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
