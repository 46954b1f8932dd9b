"""The idle CPU group the side and main lanes step aside into while the
quiet lane's host_alone modules measure (tests/lab/idle_group.py): its pure
parts on text read from real machines, and the group itself where this host
can make one."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.lab.idle_group import (
    IdleGroup,
    NoIdleGroup,
    cpu_cgroup_dir,
    descendants,
    parse_ppid,
    process_parents,
)

# the lab's own host (a VM with the cgroup v1 controllers, a v2 tree beside)
V1_MOUNTS = """tmpfs /sys/fs/cgroup tmpfs rw,relatime,mode=755 0 0
cgroup /sys/fs/cgroup/cpu cgroup rw,relatime,cpu 0 0
cgroup /sys/fs/cgroup/cpuacct cgroup rw,relatime,cpuacct 0 0
cgroup /sys/fs/cgroup/memory cgroup rw,relatime,memory 0 0
cgroup2 /sys/fs/cgroup/unified cgroup2 rw,relatime 0 0
"""
V1_CGROUP = """9:name=systemd:/
4:memory:/process_api/4ec3e9cefd6a67878ada4d04767af2cc
2:cpuacct:/
1:cpu:/
0::/
"""
# a systemd machine with the unified tree (Debian 12's default), in a session
V2_MOUNTS = """sysfs /sys sysfs rw,nosuid,nodev,noexec,relatime 0 0
cgroup2 /sys/fs/cgroup cgroup2 rw,nosuid,nodev,noexec,relatime,nsdelegate,memory_recursiveprot 0 0
"""
V2_CGROUP = "0::/user.slice/user-1000.slice/session-2.scope\n"
# Debian 10's layout: cpu and cpuacct on one mount, the process in a slice
V1_JOINED = ("cgroup /sys/fs/cgroup/cpu,cpuacct cgroup "
             "rw,nosuid,nodev,noexec,relatime,cpu,cpuacct 0 0\n")
V1_JOINED_CGROUP = "4:cpu,cpuacct:/user.slice\n0::/user.slice/session-2.scope\n"


def test_the_cpu_group_is_found_on_v1_and_v2_layouts():
    assert cpu_cgroup_dir(V1_MOUNTS, V1_CGROUP) == (Path("/sys/fs/cgroup/cpu"), "v1")
    assert cpu_cgroup_dir(V1_JOINED, V1_JOINED_CGROUP) == (
        Path("/sys/fs/cgroup/cpu,cpuacct/user.slice"), "v1")
    assert cpu_cgroup_dir(V2_MOUNTS, V2_CGROUP) == (
        Path("/sys/fs/cgroup/user.slice/user-1000.slice/session-2.scope"), "v2")
    assert cpu_cgroup_dir("proc /proc proc rw 0 0\n", "0::/\n") is None


def test_the_parent_pid_is_read_after_the_commands_name():
    # real lines of /proc/<pid>/stat; a name may hold spaces and parentheses
    assert parse_ppid("26699 (cat) R 26692 26692 18136 0 -1 4194304 103 0 0 0") == 26692
    assert parse_ppid("4242 (a) b (c)) S 1 4242 4242 0 -1 4194560 90 0 0 0") == 1


def test_a_tree_is_its_roots_and_all_below_them():
    parents = {1: 0, 10: 1, 11: 10, 12: 11, 13: 10, 20: 1, 21: 20}
    assert descendants([10], parents) == {10, 11, 12, 13}
    assert descendants([10, 20], parents) == {10, 11, 12, 13, 20, 21}
    assert descendants([99], parents) == set()  # ended already


def test_processes_step_aside_and_come_back():
    """Where this host can make the group (root, a cgroup cpu controller with
    cpu.idle): a process and its child move in, and back out."""
    try:
        group = IdleGroup.make("keel-lab-idle-unit")
    except NoIdleGroup as err:
        pytest.skip(f"no idle CPU group on this host: {err}")
    child = subprocess.Popen([sys.executable, "-c",
                              "import subprocess, sys; subprocess.run(['sleep', '30'])"])
    try:
        deadline = time.monotonic() + 10
        while len(descendants([child.pid], process_parents())) < 2:
            assert time.monotonic() < deadline
            time.sleep(0.05)
        assert group.sweep([child.pid]) == 2
        assert (group.path / "cpu.idle").read_text().strip() == "1"
        assert child.pid in group.members() and len(group.members()) == 2
    finally:
        group.release()
        child.kill()
        child.wait()
    assert not group.path.exists()
