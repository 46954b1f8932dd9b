"""The history daemon on a lab guest (keel.history): its batch written on
demand, its points read back with `keel history --json`."""

from __future__ import annotations

from tests.lab.guest import Guest

PID = "/run/keel/history.pid"
WRITTEN = "/run/keel/history/written.json"
LATEST = "/run/keel/history/latest.json"


def written_up_to(guest: Guest, t: float) -> None:
    """Tell the daemon to write now (SIGUSR1), again until its last batch
    holds the point that ends at or after `t` (the guest's clock)."""
    guest.until(f"kill -USR1 $(cat {PID}); sleep 2; python3 -c \"import json,sys; "
                f"sys.exit(json.load(open('{WRITTEN}'))['newest'] < {int(t)})\"", 120, every=3)


def kept(guest: Guest, since: float, until: float) -> list[dict]:
    """The points kept with since <= t <= until (the guest's clock), as JSON."""
    return guest.json(f"keel history --since @{int(since)} --until @{int(until)} --json", 120)
