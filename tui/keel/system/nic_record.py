"""What keel keeps of the NICs the roles resolved to: at each apply,
/run/keel/nics.json (each role's spec and kernel name now, for `keel show
ports` and the console), and /data/keel/nics.json, the NIC each role was
first found on (keel.parse.nic_first_seen): the identity the setup wizard
can name a port by, and what `keel doctor` compares a kernel name with.
Writing either never stops an apply: a /data that cannot take it is said
in one line by the caller's report, here silently skipped."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path

from keel.model.nic_roles import Role
from keel.parse.nic_first_seen import FirstSeen, dump_first_seen, parse_first_seen, updated
from keel.parse.nic_identity import Port
from keel.state.revisions import atomic_write

RUN_FILE = "nics.json"
DATA_DIR = Path("/data/keel")
DATA_FILE = "nics.json"
READ_MAX = 4096


def read_first_seen(data_dir: Path = DATA_DIR) -> dict[str, FirstSeen]:
    try:
        with open(data_dir / DATA_FILE, encoding="utf-8", errors="replace") as f:
            return parse_first_seen(f.read(READ_MAX + 1))
    except OSError:
        return {}


def record(roles: Sequence[Role], ports: Sequence[Port], run_dir: Path,
           data_dir: Path) -> None:
    """After the roles resolved: what each is now (run_dir), and the NIC each
    was first found on (data_dir, only where it is a directory: /data
    mounted)."""
    with contextlib.suppress(OSError):
        run_dir.mkdir(parents=True, exist_ok=True)
        atomic_write(run_dir / RUN_FILE, json.dumps([asdict(r) for r in roles], indent=1) + "\n")
    if not data_dir.is_dir():
        return
    by_name = {p.name: p for p in ports}
    kept = read_first_seen(data_dir)
    new = kept
    for role in roles:
        port = by_name.get(role.name or "")
        if port is not None:
            new = updated(new, role.key, role.spec, port.identity, port.name, port.driver)
    if new != kept:
        with contextlib.suppress(OSError):
            atomic_write(data_dir / DATA_FILE, dump_first_seen(new))
