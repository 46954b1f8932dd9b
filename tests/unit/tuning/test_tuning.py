"""CPU tuning against a fake sysfs tree: the governor on every policy, what is
reported where there is no cpufreq/cpuidle, RPS on single-queue NICs only."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

from keel.system.cpu_sysfs import read_tuning
from keel.system.pm_qos import read_pm_qos
from keel.tuning import cpu


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


@pytest.fixture
def hardware(tmp_path: Path) -> Path:
    root = tmp_path / "cpu"
    for n in (0, 1):
        write(root / f"cpufreq/policy{n}/scaling_available_governors", "performance powersave\n")
        write(root / f"cpufreq/policy{n}/scaling_governor", "powersave\n")
        write(root / f"cpu{n}/cpufreq/scaling_governor", "powersave\n")
        write(root / f"cpu{n}/cpufreq/scaling_cur_freq", "1200000\n")
        write(root / f"cpu{n}/cpufreq/scaling_max_freq", "2400000\n")
        write(root / f"cpu{n}/cpufreq/scaling_min_freq", "800000\n")
        for i, (name, lat) in enumerate((("POLL", 0), ("C1", 2), ("C6", 85))):
            write(root / f"cpu{n}/cpuidle/state{i}/name", name)
            write(root / f"cpu{n}/cpuidle/state{i}/latency", str(lat))
            write(root / f"cpu{n}/cpuidle/state{i}/disable", "0")
    write(root / "cpuidle/current_driver", "intel_idle\n")
    return root


def test_governor_set_on_every_policy(hardware):
    done = cpu.set_governor("performance", hardware)
    assert done == ["policy0: governor performance", "policy1: governor performance"]
    for n in (0, 1):
        assert (hardware / f"cpufreq/policy{n}/scaling_governor").read_text() == "performance"


def test_unknown_governor_is_reported_not_written(hardware):
    done = cpu.set_governor("schedutil", hardware)
    assert "not available" in done[0]
    assert (hardware / "cpufreq/policy0/scaling_governor").read_text() == "powersave\n"


def test_pm_qos_limits_the_idle_states_allowed(hardware, tmp_path):
    qos = tmp_path / "cpu_dma_latency"
    qos.write_bytes(struct.pack("<i", 3))
    tuning = read_tuning(root=str(hardware), pm_qos=lambda: read_pm_qos(qos))
    assert tuning.has_cpufreq and tuning.has_cpuidle and not tuning.managed_by_hypervisor
    assert tuning.pm_qos_us == 3
    assert [s.name for s in tuning.states_allowed() if s.cpu == 0] == ["POLL", "C1"]
    assert tuning.freq[0].cur_khz * 2 == tuning.freq[0].max_khz


def test_a_vm_without_cpufreq_or_cpuidle_is_managed_by_the_hypervisor(tmp_path):
    root = tmp_path / "cpu"
    write(root / "cpuidle/current_driver", "none\n")
    (root / "cpu0").mkdir()
    tuning = read_tuning(root=str(root), pm_qos=lambda: read_pm_qos(tmp_path / "missing"))
    assert tuning.managed_by_hypervisor and tuning.pm_qos_us is None
    assert "hypervisor" in cpu.set_governor("performance", root)[0]


def test_rps_only_on_single_queue_nics(tmp_path):
    net = tmp_path / "net"
    write(net / "eth0/queues/rx-0/rps_cpus", "0\n")
    write(net / "eth0/queues/tx-0/xps_cpus", "0\n")
    for q in range(4):
        write(net / f"eth1/queues/rx-{q}/rps_cpus", "0\n")
    assert cpu.set_rps_xps("eth0", 4, net) == ["eth0: RPS on CPUs 0-3 (mask f)",
                                              "eth0: XPS on CPUs 0-3 (mask f)"]
    assert (net / "eth0/queues/rx-0/rps_cpus").read_text() == "f"
    assert "RPS left off" in cpu.set_rps_xps("eth1", 4, net)[0]
    assert cpu.cpu_mask(2) == "3"
