"""The CPU latency limit in force (PM QoS, /dev/cpu_dma_latency): the one
reader. Reading the device does not make a request; holding it open with a
value written does (keel.tuning.cpu.hold_latency_forever)."""

from __future__ import annotations

import struct
from pathlib import Path

PM_QOS_DEVICE = Path("/dev/cpu_dma_latency")


def read_pm_qos(device: Path | None = None) -> int | None:
    """The system-wide limit in microseconds; None without the device."""
    try:
        raw = (device or PM_QOS_DEVICE).read_bytes()[:4]
    except OSError:
        return None
    return struct.unpack("<i", raw)[0] if len(raw) == 4 else None


def pm_qos_available(device: Path | None = None) -> bool:
    """Whether a CPU latency request can be held at all."""
    return (device or PM_QOS_DEVICE).exists()
