"""Bind mounts of single files: what keel keeps on /data shown where the
read-only root expects it (/etc/shadow)."""

from __future__ import annotations

import subprocess
from pathlib import Path


def bind_file(source: Path, target: Path) -> None:
    """Mount `source` over `target`, again if it was (a bind mount holds the
    file it was made with, not a newer one renamed over it)."""
    subprocess.run(["umount", str(target)], capture_output=True, check=False)
    proc = subprocess.run(["mount", "--bind", str(source), str(target)], capture_output=True,
                          text=True, check=False)
    if proc.returncode != 0:
        raise OSError(f"mount --bind {source} {target}: {proc.stderr.strip() or proc.returncode}")
