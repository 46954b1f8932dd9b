"""The running kernel: its features (/proc/config.gz, or the module lists) and
its host name."""

from __future__ import annotations

import contextlib
import gzip
import os
from pathlib import Path

from keel.kernel_features import runtime_presence
from keel.system.source import RealSource, Source, SourceError


def kernel_feature_presence(root: Path = Path("/"), release: str | None = None
                            ) -> dict[str, bool]:
    """The router's kernel features (keel.kernel_features, the one list) on the
    running kernel: from /proc/config.gz where the kernel has it, else from the
    module lists (built in, installed, loaded)."""
    release = release or os.uname().release
    moddir = root / "lib" / "modules" / release

    def read(path: Path) -> str:
        try:
            return path.read_text()
        except OSError:
            return ""

    config = ""
    with contextlib.suppress(OSError):
        config = gzip.decompress((root / "proc/config.gz").read_bytes()).decode()
    return runtime_presence(config or None, modules_builtin=read(moddir / "modules.builtin"),
                            modules_dep=read(moddir / "modules.dep"),
                            proc_modules=read(root / "proc/modules"))


def read_hostname(source: Source | None = None) -> str | None:
    """The kernel's host name now (/proc/sys/kernel/hostname)."""
    try:
        return (source or RealSource()).read_text("/proc/sys/kernel/hostname").strip() or None
    except SourceError:
        return None
