"""`keel fleet sync` started in the background: after pairing or unpairing
changed which LANs the hub's edges must reach (keel.pair calls it)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SYNC_LOG = Path("/run/keel/fleet-sync.log")


def sync_soon() -> None:
    """Start `keel fleet sync` and return; its words go to SYNC_LOG. A
    failure to start is said on stderr, with the command to run by hand."""
    try:
        SYNC_LOG.parent.mkdir(parents=True, exist_ok=True)
        with open(SYNC_LOG, "ab") as log:
            subprocess.Popen([sys.executable, "-m", "keel.cli", "fleet", "sync"],
                             stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                             start_new_session=True)
    except OSError as err:
        print(f"keel: the other edges were not given the new routes ({err.strerror}): "
              "run keel fleet sync", file=sys.stderr)
