"""The NICs: which are WireGuard, their byte and packet counters, their RPS
masks (/sys/class/net)."""

from __future__ import annotations

import os
from dataclasses import dataclass

from keel.system.source import RealSource, Source, SourceError

NET = "/sys/class/net"
COUNTERS = ("rx_bytes", "tx_bytes", "rx_packets", "tx_packets")


@dataclass(frozen=True)
class Counters:
    rx_bytes: int
    tx_bytes: int
    rx_packets: int
    tx_packets: int


def wireguard_interfaces(source: Source | None = None) -> list[str]:
    """Interfaces whose uevent says DEVTYPE=wireguard."""
    source = source or RealSource()
    try:
        names = source.listdir(NET)
    except SourceError:
        return []
    found = []
    for name in sorted(names):
        try:
            if "DEVTYPE=wireguard" in source.read_text(f"{NET}/{name}/uevent"):
                found.append(name)
        except SourceError:
            continue
    return found


def read_counters(dev: str, source: Source | None = None) -> Counters | None:
    """The interface's counters; None when it is gone or unreadable."""
    source = source or RealSource()
    try:
        values = [int(source.read_text(f"{NET}/{dev}/statistics/{name}").strip())
                  for name in COUNTERS]
    except (SourceError, ValueError):
        return None
    return Counters(*values)


class TxBytes:
    """A device's tx_bytes read again and again from one open file (a
    pread a read, not an open, read and close): the adaptive daemon reads it
    ten times a second. None when the device is gone (the file is reopened
    on the next read, for a device made again)."""

    def __init__(self, dev: str) -> None:
        self.path = f"{NET}/{dev}/statistics/tx_bytes"
        self.fd: int | None = None

    def read(self) -> int | None:
        try:
            if self.fd is None:
                self.fd = os.open(self.path, os.O_RDONLY)
            return int(os.pread(self.fd, 32, 0))
        except (OSError, ValueError):
            self.close()
            return None

    def close(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None


def rps_mask(dev: str, source: Source | None = None) -> int | None:
    """The RPS mask of a single-queue NIC; None for a multi-queue NIC or one
    whose mask cannot be read (RPS is then left alone)."""
    source = source or RealSource()
    try:
        rx = sorted(q for q in source.listdir(f"{NET}/{dev}/queues") if q.startswith("rx-"))
    except SourceError:
        return None
    if len(rx) != 1:
        return None
    try:
        text = source.read_text(f"{NET}/{dev}/queues/{rx[0]}/rps_cpus")
        return int(text.strip().replace(",", ""), 16)
    except (SourceError, ValueError):
        return None


def read_mtu(dev: str, source: Source | None = None) -> int | None:
    try:
        return int((source or RealSource()).read_text(f"{NET}/{dev}/mtu").strip())
    except (SourceError, ValueError):
        return None
