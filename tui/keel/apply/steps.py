"""A step of a plan: what it is for, the files it writes, the commands it runs,
the stamps it leaves for the next plan, and an optional action."""

from __future__ import annotations

import hashlib
import os
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from keel.apply.probe import Probe
from keel.system.processes import pid_alive


@dataclass(frozen=True)
class Step:
    component: str
    why: str
    commands: tuple[tuple[str, ...], ...] = ()
    # files written before the commands run: path -> (text, mode); contents
    # of mode-0600 files are secret and never shown
    files: tuple[tuple[str, str, int], ...] = ()
    # (path, value): written after the commands succeeded, read by the next plan
    stamps: tuple[tuple[str, str], ...] = ()
    # run before the commands; what it returns are notes (findings, in words)
    action: Callable[[], list[str] | None] | None = field(default=None, compare=False)
    # daemons started after the commands, in the background (never waited for)
    started: tuple[tuple[str, ...], ...] = ()

    def describe(self) -> list[str]:
        out = [f"{self.component}: {self.why}"]
        for path, _text, mode in self.files:
            out.append(f"  write {path}" + (" (secret, mode 0600)" if mode == 0o600 else ""))
        out += ["  " + " ".join(cmd) for cmd in self.commands]
        out += ["  " + " ".join(cmd) + " &" for cmd in self.started]
        return out


def _kill_pidfile(pidfile: str, wait: float = 3.0) -> None:
    try:
        pid = int(Path(pidfile).read_text().split()[0])
        os.kill(pid, signal.SIGTERM)
    except (OSError, ValueError, IndexError):
        Path(pidfile).unlink(missing_ok=True)
        return
    deadline = time.monotonic() + wait
    while pid_alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    Path(pidfile).unlink(missing_ok=True)


def stop_daemon(component: str, why: str, pidfile: str,
                after: tuple[tuple[str, ...], ...] = ()) -> Step:
    """Stop a daemon by its pidfile (whoever owns the file: dnsmasq drops root);
    `after` runs once it has exited (or after its 3 s of grace)."""
    return Step(component, why, after, action=lambda: _kill_pidfile(pidfile))


def plan_daemon(component: str, probe: Probe, pidfile_name: str, stamp: str,
                argv: list[str] | None, what: str, where: str, off: str) -> list[Step]:
    """A daemon that runs with exactly `argv` (its first word the Python that
    runs keel), or not at all (argv None): started when not running ("WHAT
    WHERE" says why), restarted when its command line changed (the sha256 of
    it kept as the stamp `stamp`), stopped when it should not run (`off`)."""
    pidfile = str(probe.run_dir / pidfile_name)
    running = probe.pid_alive(pidfile)
    if argv is None:
        return [stop_daemon(component, off, pidfile)] if running else []
    digest = hashlib.sha256(repr(argv[1:]).encode()).hexdigest()
    if running and probe.stamp(stamp) == digest:
        return []
    steps = [stop_daemon(component, f"{what}: restarted", pidfile)] if running else []
    steps.append(Step(component, f"{what}{where}",
                      (("start-stop-daemon", "-S", "-b", "-m", "-p", pidfile,
                        "-x", argv[0], "--", *argv[1:]),),
                      stamps=((str(probe.run_dir / "state" / stamp), digest + "\n"),)))
    return steps
