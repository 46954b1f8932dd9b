"""Lab tests that count ping replies give ping a deadline (-w), not a reply wait (-W).

With `-c N -W s`, iputils ping stops waiting twice the slowest reply after
the last send: on a busy TCG host one late reply reads as lost (a CI run went
red that way). With `-c N -w s` it waits for N replies or s seconds.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
COUNTED = re.compile(r"ping [^\"'\n]*-c ([0-9]+)[^\"'\n]*")


def counted_pings(text: str) -> list[str]:
    """Every ping command line in text that asks for more than one reply."""
    return [m.group(0) for m in COUNTED.finditer(text) if int(m.group(1)) > 1]


def test_the_pattern_finds_a_reply_wait_and_passes_a_deadline():
    assert counted_pings('check(f"ping -n -c 3 -i 0.2 -W 5 {x}", 60)') == [
        "ping -n -c 3 -i 0.2 -W 5 {x}"]
    assert counted_pings('check("ping -n -c 1 -W 2 x")') == []


def test_no_lab_test_counts_replies_with_a_reply_wait():
    offenders = []
    for path in sorted([*(ROOT / "tests/vm").glob("*.py"), *(ROOT / "tests/lab").glob("*.py")]):
        for line in counted_pings(path.read_text()):
            if "-W" in line.split() and "-w" not in line.split():
                offenders.append(f"{path.relative_to(ROOT)}: {line}")
    assert offenders == []
