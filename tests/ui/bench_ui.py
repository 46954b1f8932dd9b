"""What watching costs: run `keel tui --fake --console` in a pty at 80x24 with
TERM=linux for N seconds and print the app's own CPU % (process CPU time /
wall time) and its terminal output in bytes/s. The fake router carries a
loaded tunnel throughout (12-40 Mbit/s, every figure moving every second) and
the dashboard updates once a second. Goal (issue 21): at most 1 % of one core
and 3 KB/s (a 115200-baud serial console carries about 11.5 KB/s).

    python -m tests.ui.bench_ui [--seconds 60] [--warmup 5] [--no-console]
"""

from __future__ import annotations

import argparse
import fcntl
import os
import pty
import select
import signal
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

TOP = Path(__file__).resolve().parents[2]
GOAL_CPU_PCT = 1.0  # of one core
GOAL_BYTES_S = 3000  # of terminal output


def cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--warmup", type=float, default=5.0,
                        help="seconds of start-up left out of the figures")
    parser.add_argument("--no-console", action="store_true",
                        help="the modern profile (TERM=xterm-256color) instead")
    parser.add_argument("--size", default="80x24")
    args = parser.parse_args(argv)
    cols, rows = (int(v) for v in args.size.split("x"))

    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
    env = dict(os.environ, TERM="xterm-256color" if args.no_console else "linux",
               PYTHONPATH=str(TOP / "tui"), COLUMNS=str(cols), LINES=str(rows))
    for knob in ("TEXTUAL_FPS", "TEXTUAL_ANIMATIONS", "TEXTUAL_COLOR_SYSTEM", "NO_COLOR"):
        env.pop(knob, None)
    total = args.warmup + args.seconds
    argv_ = [sys.executable, "-m", "keel.ui", "tui", "--fake", "--seconds", str(total + 30),
             "--no-console" if args.no_console else "--console"]
    child = subprocess.Popen(argv_, stdin=slave, stdout=slave, stderr=slave, env=env,
                             start_new_session=True, cwd=TOP)
    os.close(slave)
    start = time.monotonic()
    warm_bytes = steady_bytes = 0
    cpu0 = t0 = None
    try:
        while True:
            now = time.monotonic() - start
            if cpu0 is None and now >= args.warmup:
                cpu0, t0 = cpu_seconds(child.pid), time.monotonic()
            if now >= total:
                break
            ready, _, _ = select.select([master], [], [], 0.2)
            if ready:
                try:
                    data = os.read(master, 65536)
                except OSError:
                    break
                if cpu0 is None:
                    warm_bytes += len(data)
                else:
                    steady_bytes += len(data)
            if child.poll() is not None:
                print(f"the app exited early (rc {child.returncode})", file=sys.stderr)
                return 1
        cpu1, t1 = cpu_seconds(child.pid), time.monotonic()
    finally:
        if child.poll() is None:
            os.killpg(child.pid, signal.SIGTERM)
            try:
                child.wait(5)
            except subprocess.TimeoutExpired:
                os.killpg(child.pid, signal.SIGKILL)
        os.close(master)
    wall = t1 - t0
    cpu_pct = 100 * (cpu1 - cpu0) / wall
    rate = steady_bytes / wall
    profile = "modern" if args.no_console else "console (TERM=linux)"
    print(f"profile       {profile}, {cols}x{rows}, fake live data")
    print(f"start-up      {warm_bytes} bytes in the first {args.warmup:.0f} s")
    print(f"measured      {wall:.1f} s")
    print(f"CPU           {cpu_pct:.2f} % of one core   (goal <= {GOAL_CPU_PCT:g} %)")
    print(f"terminal      {rate:.0f} bytes/s           (goal <= {GOAL_BYTES_S})")
    ok = cpu_pct <= GOAL_CPU_PCT and rate <= GOAL_BYTES_S
    print("PASS" if ok else "OVER BUDGET")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
