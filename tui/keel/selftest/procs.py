"""The processes a self-test starts (iperf3, ping): always stopped at the end,
also on Ctrl-C or when the UI that ran the test goes away."""

from __future__ import annotations

import contextlib
import signal
import subprocess
import threading
from collections.abc import Callable, Iterator, Sequence

from keel.parse.ping import PingSample, parse_ping_line


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


class PingProbe:
    """`ping -D -O -n -i INTERVAL addr` in the background; samples as they come."""

    def __init__(self, procs: Processes, addr: str, interval: float = 0.2,
                 on_sample: Callable[[str, PingSample], None] | None = None) -> None:
        self.addr = addr
        self.samples: list[PingSample] = []
        self._on_sample = on_sample
        self._proc = procs.start(["ping", "-D", "-O", "-n", "-i", str(interval),
                                  "-W", "2", addr])
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self) -> None:
        assert self._proc.stdout is not None
        for line in self._proc.stdout:
            sample = parse_ping_line(line)
            if sample is not None:
                self.samples.append(sample)
                if self._on_sample:
                    self._on_sample(self.addr, sample)

    def between(self, start: float, end: float) -> list[PingSample]:
        """Final samples (late replies replace losses) sent in [start, end)."""
        from keel.parse.ping import final_samples

        return [s for s in final_samples(list(self.samples)) if start <= s.timestamp < end]


def lines(proc: subprocess.Popen) -> Iterator[str]:
    assert proc.stdout is not None
    yield from proc.stdout
