"""The lab's steady load (tests/lab/busy.py) ends with the script that
started it: a run stopped by hand once left a whole core busy for the next
run's first half hour."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from tests.lab.paths import TOP


def test_the_load_ends_when_its_starter_is_gone() -> None:
    code = ("import sys; sys.path.insert(0, sys.argv[1]); from tests.lab.busy import busy_loop; "
            "print(busy_loop(60, 0.05).pid, flush=True)")
    started = subprocess.run([sys.executable, "-c", code, str(TOP)], capture_output=True,
                             text=True, check=True, timeout=30)
    stat = Path(f"/proc/{int(started.stdout.split()[0])}/stat")
    deadline = time.monotonic() + 10
    while stat.exists() and stat.read_text().split()[2] != "Z" and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not stat.exists() or stat.read_text().split()[2] == "Z"
