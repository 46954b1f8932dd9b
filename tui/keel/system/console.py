"""The machine's console and power: which tty this process runs on, a line
for the system console, the time since boot, a reboot."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

CONSOLE = Path("/dev/console")
UPTIME = Path("/proc/uptime")
CMDLINE = Path("/proc/cmdline")
BOOT_ID = Path("/proc/sys/kernel/random/boot_id")
TTY1 = "/dev/tty1"
TTY1_FAILURES = Path("/run/keel/tty1-failures")  # failed UI starts in a row
TTY1_LAST_FAILURE = Path("/run/keel/tty1-last-failure")  # "exit code, seconds run"


def on_tty1() -> bool:
    """This process's standard input is tty1 (the console UI as init starts it)."""
    try:
        return os.ttyname(0) == TTY1
    except OSError:
        return False


def tty1_gave_up(tries: int, count: Path = TTY1_FAILURES) -> bool:
    """tty1 has fallen back to a login: the console UI failed `tries` starts
    in a row (/usr/share/keel/tty1 counts them)."""
    try:
        return int(count.read_text().strip()) >= tries
    except (OSError, ValueError):
        return False


def tty1_last_failure(path: Path = TTY1_LAST_FAILURE) -> tuple[int, int] | None:
    """The console UI's last failed start on tty1 as /usr/share/keel/tty1
    noted it: (exit code, seconds it ran); None when none failed this boot or
    the note is unreadable."""
    try:
        code, ran = path.read_text().split()
        return int(code), int(ran)
    except (OSError, ValueError):
        return None


def say(line: str) -> None:
    """A line on the system console (the serial console too), and on stdout."""
    print(line, flush=True)
    try:
        with open(CONSOLE, "w") as console:
            console.write(line + "\n")
    except OSError:
        pass


def uptime() -> float:
    """Seconds since the kernel started."""
    return float(UPTIME.read_text().split()[0])


def boot_id() -> str:
    """This boot's id (the kernel's random boot_id), "" when unreadable: tells
    a record left by an earlier boot from one of this boot."""
    try:
        return BOOT_ID.read_text().strip()[:64]
    except OSError:
        return ""


def cmdline() -> str:
    return CMDLINE.read_text()


def reboot() -> None:
    """Reboot through init (its scripts stop the services, /data is unmounted)."""
    subprocess.run(["reboot"], check=False)
