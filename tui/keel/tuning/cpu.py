"""Holding the CPU at low latency: the governor on every cpufreq policy, deep
idle states kept off by a held /dev/cpu_dma_latency request, RPS/XPS masks
on single-queue NICs. Where there is no cpufreq or cpuidle (most VMs) the
hypervisor manages them: that is reported, not treated as a failure."""

from __future__ import annotations

import os
import signal
import struct
from pathlib import Path

from keel.system.cpu_sysfs import CPU_SYSFS
from keel.system.pm_qos import PM_QOS_DEVICE

CPU_ROOT = Path(CPU_SYSFS)
NET_ROOT = Path("/sys/class/net")


def set_governor(governor: str, root: Path = CPU_ROOT) -> list[str]:
    """Set `governor` on every cpufreq policy; what was done, in words."""
    policies = sorted((root / "cpufreq").glob("policy*"))
    if not policies:
        return ["no cpufreq: the CPU clock is managed by the hypervisor or firmware"]
    done = []
    for policy in policies:
        available = (policy / "scaling_available_governors").read_text().split()
        if governor not in available:
            done.append(f"{policy.name}: governor {governor!r} not available "
                        f"(has: {', '.join(available)})")
            continue
        (policy / "scaling_governor").write_text(governor)
        done.append(f"{policy.name}: governor {governor}")
    return done


def hold_latency_forever(max_latency_us: int, device: Path = PM_QOS_DEVICE) -> None:
    """Keep a PM QoS CPU latency request open until killed (run as a daemon:
    the kernel drops the request when the file is closed)."""
    fd = os.open(device, os.O_WRONLY)
    os.write(fd, struct.pack("<i", max_latency_us))
    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
    while True:
        signal.pause()


def cpu_mask(ncpus: int) -> str:
    """The hex mask of all `ncpus` CPUs as sysfs wants it ("3" for two CPUs)."""
    if ncpus < 1:
        raise ValueError("ncpus must be at least 1")
    return format((1 << ncpus) - 1, "x")


def set_rps_xps(ifname: str, ncpus: int, net_root: Path = NET_ROOT) -> list[str]:
    """Spread a single-queue NIC's receive (RPS) and transmit (XPS) work over
    all CPUs. Multi-queue NICs are left to their own IRQ spreading."""
    queues = net_root / ifname / "queues"
    rx = sorted(queues.glob("rx-*"))
    tx = sorted(queues.glob("tx-*"))
    if ncpus < 2:
        return [f"{ifname}: one CPU, nothing to spread"]
    if len(rx) != 1:
        return [f"{ifname}: {len(rx)} receive queues, RPS left off"]
    mask = cpu_mask(ncpus)
    (rx[0] / "rps_cpus").write_text(mask)
    cpus = f"CPUs 0-{ncpus - 1} (mask {mask})"
    done = [f"{ifname}: RPS on {cpus}"]
    if len(tx) == 1 and (tx[0] / "xps_cpus").exists():
        try:
            (tx[0] / "xps_cpus").write_text(mask)
            done.append(f"{ifname}: XPS on {cpus}")
        except OSError as exc:
            done.append(f"{ifname}: XPS not set ({exc.strerror})")
    return done
