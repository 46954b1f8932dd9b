"""keel.system: one reader per fact, each on the lab's captured output behind
a FixtureSource (what the dashboard, the doctor, the plan and the self-tests
all read through)."""

from __future__ import annotations

import subprocess

import pytest

from keel.parse.kworkers import crypt_ticks_between
from keel.system.cpu_sysfs import cpuinfo_mhz, read_tuning
from keel.system.cpu_times import read_cpu_times
from keel.system.kworkers import read_kworkers
from keel.system.links import read_counters, read_mtu, rps_mask, wireguard_interfaces
from keel.system.qdiscs import cake_roots, read_qdiscs, root_qdisc, tc_qdisc_argv
from keel.system.source import FixtureSource, RunnerSource, SourceError
from keel.system.wireguard import WG_DUMP, read_wireguard
from tests.fixtures.sources import CRYPT_SHIFT, fixture_source, lab


def test_cpu_times_per_core_and_total():
    times = read_cpu_times(fixture_source())
    assert set(times) == {"cpu", "cpu0", "cpu1"}
    with pytest.raises(SourceError):
        read_cpu_times(FixtureSource())


def test_kworkers_scan_every_process_once_and_know_when():
    source = fixture_source()
    before, after = read_kworkers(source, hz=100), read_kworkers(source, hz=100)
    assert before.at_ticks == 10_000 and after.at_ticks == 10_500
    assert all(t.comm.startswith("kworker/") for t in after.tasks.values())
    reads = [r for r in source.reads if r.startswith("/proc/") and r.endswith("/stat")]
    assert len(reads) == 2 * len(after.tasks)  # one read per process and scan
    busy = sum(1 for t in before.tasks.values() if "wg-crypt" in t.comm
               and after.tasks[t.pid].ticks > t.ticks)
    assert crypt_ticks_between(before, after) == busy * CRYPT_SHIFT


def test_qdiscs_one_argv_for_all_and_for_one_device():
    qdiscs = read_qdiscs(fixture_source())
    assert cake_roots(qdiscs) == ["eth0", "ifb4eth0"]
    assert root_qdisc(qdiscs, "eth0").bandwidth_bps > 0
    assert tc_qdisc_argv("eth0") == ["tc", "-s", "-j", "qdisc", "show", "dev", "eth0"]
    one = FixtureSource(commands={tuple(tc_qdisc_argv("ifb4eth0")): lab("tc-qdisc-ifb.json")})
    assert {q.dev for q in read_qdiscs(one, "ifb4eth0")} == {"ifb4eth0"}
    broken = FixtureSource(commands={tuple(tc_qdisc_argv()): "Error: not JSON"})
    with pytest.raises(SourceError, match="not what tc prints"):
        read_qdiscs(broken)


def test_wireguard_dump_and_its_failures():
    (wg0,) = read_wireguard(fixture_source()).values()
    assert wg0.name == "wg0" and wg0.peers[0].endpoint == "192.0.2.2:51820"
    with pytest.raises(SourceError):
        read_wireguard(FixtureSource())
    with pytest.raises(SourceError, match="wg show all dump"):
        read_wireguard(FixtureSource(commands={WG_DUMP: "wg0\tnot enough fields\n"}))


def test_links_counters_rps_and_mtu():
    source = fixture_source()
    assert wireguard_interfaces(source) == ["wg0"]
    assert read_counters("wg0", source).rx_bytes == 1_000_000
    assert read_counters("eth9", source) is None
    files = {"/sys/class/net/eth0/queues/rx-0/rps_cpus": "00000003\n",
             "/sys/class/net/eth0/queues/tx-0/xps_cpus": "0\n",
             "/sys/class/net/eth1/queues/rx-0/rps_cpus": "0\n",
             "/sys/class/net/eth1/queues/rx-1/rps_cpus": "0\n",
             "/sys/class/net/eth0/mtu": "1500\n"}
    source = FixtureSource(files)
    assert rps_mask("eth0", source) == 3
    assert rps_mask("eth1", source) is None  # multi-queue: left alone
    assert read_mtu("eth0", source) == 1500 and read_mtu("eth1", source) is None


def test_cpu_sysfs_in_a_vm_and_on_bare_metal():
    vm = read_tuning(fixture_source(), pm_qos=lambda: None)
    assert vm.managed_by_hypervisor
    assert cpuinfo_mhz(fixture_source()) == pytest.approx(2300.022, abs=1)
    root = "/sys/devices/system/cpu"
    metal = FixtureSource({
        f"{root}/cpuidle/current_driver": "intel_idle\n",
        f"{root}/cpu0/cpufreq/scaling_governor": "performance\n",
        f"{root}/cpu0/cpufreq/scaling_cur_freq": "2000000\n",
        f"{root}/cpu0/cpufreq/scaling_max_freq": "4000000\n",
        f"{root}/cpu0/cpufreq/scaling_min_freq": "800000\n",
        **{f"{root}/cpu0/cpuidle/state{i}/{k}": v for i, (name, lat) in
           enumerate([("POLL", 0), ("C1", 2), ("C6", 133)])
           for k, v in (("name", name), ("latency", str(lat)), ("usage", "1"),
                        ("time", "1"), ("disable", "0"))}})
    tuning = read_tuning(metal, pm_qos=lambda: 20)
    assert tuning.has_cpufreq and tuning.freq[0].max_khz == 4_000_000
    assert [s.name for s in tuning.states_allowed()] == ["POLL", "C1"]


def test_runner_source_reads_through_the_runner_and_names_failures():
    class Fake:
        def run(self, argv, check=False):
            rc = 0 if argv[0] == "wg" else 1
            return subprocess.CompletedProcess(argv, rc, lab("wg-show-all-dump.txt"), "nope")

    source = RunnerSource(Fake())
    assert "wg0" in read_wireguard(source)
    with pytest.raises(SourceError, match="nope"):
        read_qdiscs(source)
