"""Run lab tests on a busier host: a share of one host core (--share, 1 by
default; `make test BUSY=0.5` runs the whole suite beside half a core) kept
busy by a loop that this script starts and stops (and that ends by itself
after --max-seconds), while a monitor records how much host CPU each QEMU
guest takes.

    python -m tests.lab.busy --runs 3 -- python -m pytest tests/vm/test_selftest.py

Each run gets KEEL_LAB_LABEL=busy-<n>, which the lab's figures carry
(out/lab-runs/figures.jsonl); the monitor's summary (per guest: mean and
peak share of one host core, and how busy the host was) is printed after each
run and kept in out/lab-runs/busy-<n>.cpu.txt."""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

from tests.lab.paths import RUNS

HZ = os.sysconf("SC_CLK_TCK")
_OVERLAY = re.compile(rb"file=[^,\x00]*/([A-Za-z0-9_-]+)\.qcow2")


PERIOD_S = 0.010  # the duty cycle's period: a steady load, not bursts


def busy_loop(max_seconds: float, share: float = 1.0) -> subprocess.Popen:
    """`share` of one core kept busy: in each 10 ms, that much CPU time spent
    spinning (counted in CPU time, so a contended host still carries the
    whole share), then a sleep to the period's end; the loop stops by itself
    after max_seconds, or as soon as this process is gone (killed with the
    run it loaded)."""
    if not 0 < share <= 1:
        raise ValueError(f"--share must be in (0, 1], not {share}")
    code = (f"import os, time\nend = time.monotonic() + {max_seconds}\n"
            f"period, spin = {PERIOD_S}, {PERIOD_S * share}\n"
            # ends with this script too: a stopped run leaves no load behind
            f"while (start := time.monotonic()) < end and os.getppid() == {os.getpid()}:\n"
            "    cpu = time.process_time()\n"
            "    while time.process_time() - cpu < spin:\n        pass\n"
            "    if (left := start + period - time.monotonic()) > 0:\n"
            "        time.sleep(left)\n")
    return subprocess.Popen([sys.executable, "-c", code])


def qemu_guests() -> dict[str, int]:
    """Guest name (its overlay's file name) -> QEMU pid."""
    found = {}
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        if b"qemu-system" in cmdline.split(b"\0", 1)[0] and (m := _OVERLAY.search(cmdline)):
            found[m.group(1).decode()] = int(pid)
    return found


def cpu_ticks(pid: int) -> int | None:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return int(fields[11]) + int(fields[12])  # utime + stime


def host_busy_ticks() -> tuple[int, int]:
    cpu = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    return sum(cpu) - cpu[3] - cpu[4], sum(cpu)  # busy (not idle, not iowait), total


class Monitor:
    """Per second: each guest's share of one host core; the host's busy share."""

    def __init__(self) -> None:
        self.samples: list[tuple[float, dict[str, float]]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> Monitor:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        before: dict[int, int] = {}
        busy0, total0 = host_busy_ticks()
        while not self._stop.wait(1.0):
            row: dict[str, float] = {}
            for name, pid in qemu_guests().items():
                ticks = cpu_ticks(pid)
                if ticks is not None and pid in before:
                    row[name] = 100.0 * (ticks - before[pid]) / HZ
                if ticks is not None:
                    before[pid] = ticks
            busy1, total1 = host_busy_ticks()
            row["host busy %"] = 100.0 * (busy1 - busy0) / max(1, total1 - total0)
            busy0, total0 = busy1, total1
            self.samples.append((time.time(), row))

    def summary(self) -> str:
        """Mean and 95th percentile over the seconds when a guest was busy
        (>= 10 % of a core: the measurements, not the boots' idle tails)."""
        names = sorted({k for _, row in self.samples for k in row})
        lines = ["share of one host core, over the seconds the guest was busy (>= 10 %)",
                 f"{'':14}{'mean':>8}{'p95':>8}{'seconds':>9}"]
        for name in names:
            values = sorted(row[name] for _, row in self.samples
                            if name in row and (row[name] >= 10 or name == "host busy %"))
            if values:
                p95 = values[min(len(values) - 1, int(0.95 * len(values)))]
                lines.append(f"{name:14}{sum(values) / len(values):8.0f}{p95:8.0f}"
                             f"{len(values):9d}")
        return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--max-seconds", type=float, default=3600,
                        help="the busy loop ends by itself after this long (default 3600)")
    parser.add_argument("--share", type=float, default=1.0,
                        help="the share of one core the loop keeps busy (default 1)")
    parser.add_argument("--no-load", action="store_true",
                        help="no busy loop: the monitor alone (a baseline)")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("give the command to run after --")
    RUNS.mkdir(parents=True, exist_ok=True)
    failed = 0
    for n in range(1, args.runs + 1):
        label = f"{'idle' if args.no_load else f'busy{args.share:g}'}-{n}"
        print(f"== {label}: {' '.join(command)}", flush=True)
        loop = None if args.no_load else busy_loop(args.max_seconds, args.share)
        try:
            with Monitor() as monitor:
                rc = subprocess.call(command, env={**os.environ, "KEEL_LAB_LABEL": label})
        finally:
            if loop is not None:
                loop.kill()
                loop.wait()
        text = monitor.summary()
        (RUNS / f"{label}.cpu.txt").write_text(text + "\n")
        print(f"== {label}: exit {rc}\n{text}", flush=True)
        failed += rc != 0
    print(f"== {args.runs - failed} of {args.runs} runs passed", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
