"""tests/lab/cpucap.py: a guest's QEMU held to a share of a core (the CPU-bound
tunnel of the starving lab)."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest

from tests.lab import cpucap


def test_the_cpu_hierarchy_is_found_in_either_version(tmp_path: Path) -> None:
    (tmp_path / "cgroup.controllers").write_text("memory pids\n")
    with pytest.raises(cpucap.Unavailable, match="no cgroup cpu controller"):
        cpucap.hierarchy(tmp_path)
    (tmp_path / "cpu,cpuacct").mkdir()
    (tmp_path / "cpu,cpuacct" / "cpu.cfs_quota_us").write_text("-1\n")
    assert cpucap.hierarchy(tmp_path) == cpucap.Hierarchy(tmp_path / "cpu,cpuacct", 1)
    (tmp_path / "cgroup.controllers").write_text("cpuset cpu io memory\n")
    assert cpucap.hierarchy(tmp_path) == cpucap.Hierarchy(tmp_path, 2)


def test_the_limit_is_written_as_each_version_reads_it() -> None:
    assert cpucap.limit_line(0.35, 2) == ("cpu.max", "3500 10000\n")
    assert cpucap.limit_line(0.35, 1) == ("cpu.cfs_quota_us", "3500\n")
    for bad in (0.0, 0.01, 1.5):
        with pytest.raises(ValueError, match="of a core"):
            cpucap.limit_line(bad, 1)


def _cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def test_a_busy_process_gets_its_share_and_goes_back_where_it_was() -> None:
    """On this host, as root (as the lab runs; the starving lab needs it): a
    process spinning on a whole core gets about a third of one while capped,
    then its cgroup is gone and it is where it was."""
    proc = subprocess.Popen(["python3", "-c", "while True: pass"])
    try:
        home = Path(f"/proc/{proc.pid}/cgroup").read_text()
        time.sleep(0.3)
        with cpucap.capped(proc.pid, 0.3) as group:
            c0, t0 = _cpu_s(proc.pid), time.monotonic()
            time.sleep(2)
            share = (_cpu_s(proc.pid) - c0) / (time.monotonic() - t0)
            assert str(proc.pid) in (group / "cgroup.procs").read_text().split()
        assert 0.15 <= share <= 0.4, share
        assert not group.exists()
        assert Path(f"/proc/{proc.pid}/cgroup").read_text() == home
    finally:
        proc.kill()
        proc.wait()
