"""A lab: several guests wired into named point-to-point links.

Links are QEMU `dgram` netdevs over unix datagram sockets on this machine:
traffic never leaves it, and no guest gets QEMU's user-mode network.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from pathlib import Path

from tests.lab import accel as accel_mod
from tests.lab import saved as saved_mod
from tests.lab.guest import BOOT_TIMEOUT, NIC_MODELS, Guest, Nic, log_in_all
from tests.lab.paths import LabError

# every lab started in this process: (its work directory's name, its guests,
# each marked " (restored)" if it was, seconds from QEMU's start to the last
# guest logged in or restored); `make test` prints them
BOOTS: list[tuple[str, tuple[str, ...], float]] = []
# KEEL_LAB_RESTORE=0: every guest boots (tests/lab/saved.py otherwise);
# =all: guests that ask to boot (`boots=True`) are restored too, to compare
RESTORE = os.environ.get("KEEL_LAB_RESTORE", "1") != "0"
RESTORE_ALL = os.environ.get("KEEL_LAB_RESTORE", "1") == "all"
# every guest stopped in this process: (its lab's work directory, the
# guest's name, CPU seconds its QEMU took over its life, seconds it lived)
GUEST_CPU: list[tuple[str, str, float, float]] = []


class Lab:
    def __init__(self, workdir: Path, accel: accel_mod.Accel | None = None) -> None:
        self.workdir = workdir
        self.accel = accel or accel_mod.detect()
        self.guests: dict[str, Guest] = {}
        self.links: dict[str, tuple[str, str | None]] = {}
        # unix socket paths must stay short (108 bytes): keep them in /tmp
        self._sockdir = Path(tempfile.mkdtemp(prefix="keel-lab-"))

    def guest(self, name: str, **kwargs) -> Guest:
        if name in self.guests:
            raise LabError(f"guest {name!r} defined twice")
        kwargs.setdefault("qmp", self._sockdir / f"{name}.qmp")
        guest = Guest(name, self.workdir, accel=self.accel, **kwargs)
        self.guests[name] = guest
        return guest

    def link(self, name: str, a: Guest, b: Guest | None = None,
             models: tuple[str, str] = ("virtio-net-pci", "virtio-net-pci")) -> None:
        """Wire `a` and `b` with a point-to-point link (b=None: a NIC with no
        peer); `models`: the QEMU NIC model at each end (guest.NIC_MODELS)."""
        if not set(models) <= set(NIC_MODELS):
            raise LabError(f"link {name!r}: NIC models {models} not among {NIC_MODELS}")
        if name in self.links:
            raise LabError(f"link {name!r} defined twice")
        self.links[name] = (a.name, b.name if b else None)
        ends = [a] if b is None else [a, b]
        socks = [self._sockdir / f"{name}.{i}" for i in range(2)]
        for i, guest in enumerate(ends):
            gi = list(self.guests).index(guest.name)
            mac = f"52:54:00:4b:{gi:02x}:{len(guest.nics):02x}"
            guest.nics.append(Nic(link=name, mac=mac, local=socks[i], remote=socks[1 - i],
                                  model=models[i]))

    def start(self, timeout: float = BOOT_TIMEOUT) -> None:
        """Start every guest: restored from its kind's saved state
        (tests/lab/saved.py), or booted in parallel and logged in."""
        began = time.monotonic()
        kinds = {name: saved_mod.kind_of(g, even_booting=RESTORE_ALL) if RESTORE else None
                 for name, g in self.guests.items()}
        booting = [g for name, g in self.guests.items() if kinds[name] is None]
        for guest in booting:
            guest.start()
        states = saved_mod.saved({k for k in kinds.values() if k is not None}, self.accel,
                                 timeout)
        restored = saved_mod.restore([(g, states[kinds[name]]) for name, g in self.guests.items()
                                      if kinds[name] is not None], timeout)
        log_in_all(booting, timeout)
        BOOTS.append((self.workdir.name,
                      tuple(n + (" (restored)" if n in restored else "") for n in self.guests),
                      time.monotonic() - began))

    def close(self) -> None:
        for guest in self.guests.values():
            guest.stop()
            if guest.lived:
                GUEST_CPU.append((f"{self.workdir.parent.name}/{self.workdir.name}", guest.name,
                                  guest.cpu_used, guest.lived))
        shutil.rmtree(self._sockdir, ignore_errors=True)

    def __enter__(self) -> Lab:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
