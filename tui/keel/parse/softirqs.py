"""/proc/softirqs: event counts (not time) per softirq and CPU."""

from __future__ import annotations


def parse_softirqs(text: str) -> dict[str, dict[str, int]]:
    """{"NET_RX": {"cpu0": n, ...}, ...}; CPU names lower-cased like /proc/stat."""
    lines = [line for line in text.splitlines() if line.strip()]
    if not lines:
        return {}
    cpus = [c.lower() for c in lines[0].split()]
    table: dict[str, dict[str, int]] = {}
    for line in lines[1:]:
        name, _, rest = line.partition(":")
        counts = [int(v) for v in rest.split()]
        table[name.strip()] = dict(zip(cpus, counts, strict=False))
    return table


def rates(before: dict[str, dict[str, int]], after: dict[str, dict[str, int]],
          seconds: float) -> dict[str, dict[str, float]]:
    """Events per second per softirq and CPU between two parses."""
    if seconds <= 0:
        raise ValueError("seconds must be positive")
    return {
        name: {cpu: max(0, count - before.get(name, {}).get(cpu, 0)) / seconds
               for cpu, count in row.items()}
        for name, row in after.items()
    }
