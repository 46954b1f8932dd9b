"""A Python script run in a network namespace of its own (`unshare -n`) with
keel importable: tests that load rulesets into a real nftables on the host
without touching the host's. The script gets keel's path and a scratch
directory as argv[1] and argv[2] and prints one JSON document."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

TOP = Path(__file__).resolve().parents[2]

needs_nft = pytest.mark.skipif(shutil.which("nft") is None or shutil.which("unshare") is None,
                               reason="no nft or unshare on this host")


def run_in_netns(script: str, scratch: Path) -> Any:
    """The script's printed JSON; skips when this user may make no namespace."""
    proc = subprocess.run(["unshare", "-n", sys.executable, "-c", script, str(TOP / "tui"),
                           str(scratch)], capture_output=True, text=True, timeout=60,
                          cwd=TOP, check=False)
    if proc.returncode != 0 and ("Operation not permitted" in proc.stderr
                                 or "unshare failed" in proc.stderr):
        pytest.skip("no network namespace for this user")
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)
