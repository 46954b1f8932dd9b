"""The self-test runner the console UI drives: `keel selftest KIND --events` in
a child process (so stopping it is one signal: the child stops its iperf3 and
ping processes and restores CAKE itself), its JSON Lines read back into the
events of keel.selftest.events."""

from __future__ import annotations

import ctypes
import signal
import subprocess
import sys
from collections.abc import Iterator, Mapping
from typing import Any

from keel.selftest.events import Event, Failed, loads


def _die_with_parent() -> None:
    """Linux: the child gets SIGTERM if the UI dies, even by SIGKILL."""
    try:
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except OSError:
        pass


class KeelSelfTestRunner:
    def __init__(self, argv0: tuple[str, ...] = (sys.executable, "-m", "keel.cli")) -> None:
        self.argv0 = argv0

    def argv(self, kind: str, options: Mapping[str, Any]) -> list[str]:
        argv = [*self.argv0, "selftest", kind, "--events"]
        if options.get("compare"):
            argv.append("--compare")
        return argv

    def start(self, kind: str, options: Mapping[str, Any]) -> Iterator[Event]:
        proc = subprocess.Popen(self.argv(kind, options), stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True,
                                preexec_fn=_die_with_parent)
        failed = False
        try:
            assert proc.stdout is not None
            for line in proc.stdout:
                if not line.strip():
                    continue
                try:
                    event = loads(line)
                except ValueError:
                    continue  # not an event (a stray print): nothing to show
                failed = failed or isinstance(event, Failed)
                yield event
            stderr = proc.stderr.read() if proc.stderr else ""
            rc = proc.wait()
            if rc != 0 and not failed:
                last = [s for s in stderr.splitlines() if s.strip()]
                yield Failed(kind, last[-1].strip() if last
                             else f"keel selftest {kind} failed ({rc})")
        finally:
            if proc.poll() is None:
                proc.terminate()  # the child stops its load and restores CAKE
                try:
                    proc.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    proc.kill()
