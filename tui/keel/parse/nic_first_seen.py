"""What keel keeps of the NICs each role was first found on
(/data/keel/nics.json, written by keel.system.nic_record): per key
(`wan.interface`, `lan.interface`), the config's spec then and the identity
of the NIC it resolved to (`mac:...` or `pci:...`), its kernel name and
driver. The setup wizard names a port by that identity; `keel doctor` says
when a kernel name has since moved to another NIC.

Pure and strict: JSON of at most RECORD_MAX bytes, an object of the two
keys, each an object of four strings of bounded length; anything else is no
record (an empty dict), never an exception."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass

RECORD_MAX = 4096
KEYS = ("wan.interface", "lan.interface")
FIELD_MAX = 80


@dataclass(frozen=True)
class FirstSeen:
    spec: str  # the config's value when it was found: "eth0", "mac:..."
    identity: str  # "mac:52:54:00:12:34:56" (or "pci:..." where it has no MAC of its own)
    name: str  # its kernel name then
    driver: str  # its driver then


def parse_first_seen(text: str) -> dict[str, FirstSeen]:
    """The record; {} when it is not one (too long, not JSON, not its shape)."""
    if len(text) > RECORD_MAX:
        return {}
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        return {}
    if not isinstance(data, dict):
        return {}
    found = {}
    for key in KEYS:
        entry = data.get(key)
        if not isinstance(entry, dict):
            continue
        values = [entry.get(f) for f in ("spec", "identity", "name", "driver")]
        if all(isinstance(v, str) and len(v) <= FIELD_MAX and v.isprintable() for v in values):
            found[key] = FirstSeen(*values)  # type: ignore[arg-type]
    return found


def dump_first_seen(record: dict[str, FirstSeen]) -> str:
    return json.dumps({k: asdict(v) for k, v in sorted(record.items()) if k in KEYS},
                      indent=1) + "\n"


def updated(record: dict[str, FirstSeen], key: str, spec: str, identity: str, name: str,
            driver: str) -> dict[str, FirstSeen]:
    """The record after an apply found `key`'s NIC: kept where the config
    still says the same spec (it was found first then), new where it says
    another one or none was kept."""
    if key not in KEYS or not identity:
        return record
    kept = record.get(key)
    if kept is not None and kept.spec == spec:
        return record
    return {**record, key: FirstSeen(spec[:FIELD_MAX], identity[:FIELD_MAX], name[:FIELD_MAX],
                                     driver[:FIELD_MAX])}
