"""Mounts: bind mounts of single files (what keel keeps on /data shown where
the read-only root expects it: /etc/shadow), and which device is mounted
where (/proc/self/mountinfo)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

MOUNTINFO = Path("/proc/self/mountinfo")
_OCTAL = re.compile(r"\\([0-7]{3})")


def bind_file(source: Path, target: Path) -> None:
    """Mount `source` over `target`, again if it was (a bind mount holds the
    file it was made with, not a newer one renamed over it)."""
    subprocess.run(["umount", str(target)], capture_output=True, check=False)
    proc = subprocess.run(["mount", "--bind", str(source), str(target)], capture_output=True,
                          text=True, check=False)
    if proc.returncode != 0:
        raise OSError(f"mount --bind {source} {target}: {proc.stderr.strip() or proc.returncode}")


def _unescape(field: str) -> str:
    """mountinfo's escapes (a space is \\040) undone."""
    return _OCTAL.sub(lambda m: chr(int(m.group(1), 8)), field)


def mount_source(mountpoint: Path, mountinfo: Path = MOUNTINFO) -> Path | None:
    """The block device mounted at `mountpoint` (the last mount there), or
    None: nothing mounted there, not a device, or mountinfo unreadable."""
    try:
        text = mountinfo.read_text(errors="replace")
    except OSError:
        return None
    found = None
    for line in text.splitlines():
        fields = line.split(" ")
        if "-" not in fields[6:]:
            continue
        sep = fields.index("-", 6)
        if len(fields) > sep + 2 and _unescape(fields[4]) == str(mountpoint):
            found = _unescape(fields[sep + 2])
    return Path(found) if found and found.startswith("/dev/") else None
