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


def _left(base: Path) -> list[Path]:
    """Cap cgroups left behind: in v2's root or a v1 hierarchy."""
    return [*base.glob("keel-lab-cap-*"), *base.glob("*/keel-lab-cap-*")]


def _state(pid: int) -> str:
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]


def _held(share: float, base: Path) -> tuple[str, float, int]:
    """A process spinning on a core, capped at `share` for 2 s: how it was
    held, the share it got, and its pid (still running)."""
    proc = subprocess.Popen(["python3", "-c", "while True: pass"])
    try:
        home = Path(f"/proc/{proc.pid}/cgroup").read_text()
        time.sleep(0.3)
        with cpucap.capped(proc.pid, share, base=base) as how:
            c0, t0 = _cpu_s(proc.pid), time.monotonic()
            time.sleep(2)
            got = (_cpu_s(proc.pid) - c0) / (time.monotonic() - t0)
        time.sleep(0.05)
        assert _state(proc.pid) == "R"  # never left stopped
        assert Path(f"/proc/{proc.pid}/cgroup").read_text() == home
        assert not _left(base)
        return how, got, proc.pid
    finally:
        proc.kill()
        proc.wait()


def test_a_busy_process_gets_its_share_and_goes_back_where_it_was() -> None:
    """On this host, as root (as the lab runs): a process spinning on a whole
    core gets at most about a third of one while capped at 0.3 (less on a
    busy host), then it is where it was, running."""
    how, got, _ = _held(0.3, cpucap.CGROUP_ROOT)
    assert 0.0 < got <= 0.4, (how, got)


def test_without_a_cgroup_the_process_is_held_by_a_duty_cycle(tmp_path: Path) -> None:
    how, got, _ = _held(0.3, tmp_path)
    assert how.startswith("stopped and continued every 10 ms (no cgroup cpu controller")
    assert 0.0 < got <= 0.4, (how, got)


def test_a_bad_share_changes_nothing() -> None:
    with pytest.raises(ValueError, match="of a core"), cpucap.capped(os.getpid(), 2.0):
        pass
    assert not _left(cpucap.CGROUP_ROOT)


def test_a_cgroup_that_refuses_the_process_is_removed_and_the_duty_cycle_holds_it(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """This host's cgroup cpu hierarchy, its cgroup.procs refusing the write
    (as a delegated or read-only one does): the half-made cgroup goes, and
    the process is held by the duty cycle instead, and left running."""
    real_write = Path.write_text

    def write(path: Path, text: str, *args, **kwargs) -> int:
        if path.name == "cgroup.procs":
            raise PermissionError(13, "Permission denied")
        return real_write(path, text, *args, **kwargs)

    monkeypatch.setattr(Path, "write_text", write)
    how, got, _ = _held(0.3, cpucap.CGROUP_ROOT)  # _held checks that none is left
    assert how.startswith("stopped and continued every 10 ms ("), how
    assert 0.0 < got <= 0.4, (how, got)
    try:
        cpucap.hierarchy()
    except cpucap.Unavailable:
        return  # a host with none: the fallback above was for that reason
    assert "Permission denied" in how, how
