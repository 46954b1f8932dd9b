"""The fleet's work started apart from the caller. After pairing or
unpairing changed which LANs the hub's edges must reach (keel.pair calls
it): the hub's watcher (keel fleet watch) told to look at once, which gives
every edge its routes; without a watcher, `keel fleet sync` started in the
background. And a staged upgrade started from the console (`keel fleet
upgrade`: it outlives the screen)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

SYNC_LOG = Path("/run/keel/fleet-sync.log")


def sync_soon(pidfile: Path | None = None) -> None:
    """Wake the watcher, or start `keel fleet sync`, and return. A failure
    to start is said on stderr, with the command to run by hand."""
    from keel.apply.fleet import WATCH_ARGV, WATCH_PIDFILE
    from keel.apply.probe import RUN_DIR
    from keel.system.processes import pidfile_pid, runs_with

    pid = pidfile_pid(str(pidfile or RUN_DIR / WATCH_PIDFILE))
    if pid is not None and runs_with(pid, WATCH_ARGV[1:]):
        try:
            os.kill(pid, signal.SIGUSR1)
            return
        except OSError:
            pass  # gone meanwhile: a sync of its own
    try:
        SYNC_LOG.parent.mkdir(parents=True, exist_ok=True)
        with open(SYNC_LOG, "ab") as log:
            subprocess.Popen([sys.executable, "-m", "keel.cli", "fleet", "sync"],
                             stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                             start_new_session=True)
    except OSError as err:
        print(f"keel: the other edges were not given the new routes ({err.strerror}): "
              "run keel fleet sync", file=sys.stderr)


def start_rollout(target: str) -> None:
    """`keel fleet upgrade TARGET` started apart from the console (its lines
    in keel.fleet.rollout.LOG, its state in STATE); OSError when it cannot
    start, TargetError for a target that is no bundle path or URL."""
    from keel.fleet.rollout import LOG
    from keel.upgrade.target import check_target

    argv = [sys.executable, "-m", "keel.cli", "fleet", "upgrade", check_target(target)]
    LOG.parent.mkdir(parents=True, exist_ok=True)
    with open(LOG, "ab") as log:
        subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                         start_new_session=True)
