"""Block devices: how many bytes the kernel has written to them (what
`keel upgrade`'s bar follows while RAUC writes a slot)."""

from __future__ import annotations

import os
from pathlib import Path

SYS_BLOCK = Path("/sys/class/block")


def bytes_written(devices: tuple[Path, ...], sys_block: Path = SYS_BLOCK) -> int | None:
    """Bytes written to these block devices (symlinks such as
    /dev/disk/by-partlabel/* followed) since boot: the sectors written of
    /sys/class/block/<name>/stat (field 7, 512 bytes each); None when unknown."""
    total = 0
    for device in devices:
        try:
            name = Path(os.path.realpath(device)).name
            fields = (sys_block / name / "stat").read_text().split()
            total += int(fields[6]) * 512
        except (OSError, IndexError, ValueError):
            return None
    return total
