"""Booted guests saved once and restored after: a lab's guest starts from a
saved state in seconds instead of booting for one to five minutes.

A guest's *kind* is what QEMU needs identical to load a saved state: vCPUs,
memory, the number of NICs, the extra disks (the same files). A kind is
booted once (Lab.start() boots the kinds it lacks, side by side, under a
lock that the other lanes wait on), logged in and set up as every lab guest
is (tests/lab/guest.py: the console UI on tty1 off, no root password), left
until its boot's `keel apply` has ended, then saved with QEMU's own means: the
guest paused, its RAM and devices migrated to a file, its disk (a qcow2
overlay of the dev image) kept beside it. A restore copies the disk, starts
QEMU with `-incoming file:` and continues the guest.

Saved states live under out/lab-cache/, one directory per kind, keyed by the
dev image, the QEMU version and the kind's whole QEMU command line: a new
image, QEMU or device layout saves afresh; a later run of the same image
restores at once.

What a restored guest must not share with its siblings is made anew by
refresh_command(): the clock is stepped to the host's; each NIC gets the
MAC address its lab gives it (the saved guest had the kind's own); the
WireGuard key, the SSH host key and the DHCPv6 DUID on /data are removed and
made again (dropbear restarted; `keel apply --boot`, as the boot ran it,
repairs what the config in force runs, the DHCP clients and server killed
first so that they start with the new addresses); the kernel's random generator reseeds by itself
(QEMU's vmgenid device changes its generation id on every start, and Linux
reseeds on the change).

Guests that tests boot on purpose are not restored: those made with
`boots=True`, UEFI, a disk of another size, the console UI left on tty1 (the
boot and upgrade tests), and a Guest made without a QMP socket."""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from tests.lab import accel as accel_mod
from tests.lab.guest import BOOT_TIMEOUT, Guest, Nic, log_in_all
from tests.lab.paths import OUT, LabError, dev_image
from tests.lab.qmp import Qmp

CACHE = OUT / "lab-cache"
CLOCK_STEPPED = "/run/lab-clock-stepped"  # the guest's clock right after its step
# what identifies a guest on /data, made again on restore
IDENTITY = ("/data/keel/wireguard.key", "/data/keel/dhcpcd/duid",
            "/data/keel/ssh/host_ed25519", "/data/keel/ssh/host_ed25519.pub")
# the daemons of the shipped default that took a NIC's MAC address when they
# started (the DHCP client's chaddr and client id, dhcpcd's and dnsmasq's
# DUIDs): killed after the new addresses, started again by `keel apply --boot`
MAC_DAEMONS = ("udhcpc", "dhcpcd", "dnsmasq")


def template_mac(index: int) -> str:
    """The MAC address of a saved guest's NIC `index` (the labs' are 52:54:00:4b:...)."""
    return f"52:54:00:4c:ff:{index:02x}"


@dataclass(frozen=True)
class Kind:
    smp: int
    memory: int
    nics: int
    drives: tuple[Path, ...] = ()


@dataclass(frozen=True)
class Saved:
    """A kind's saved state: its disk and its RAM and devices."""

    kind: Kind
    where: Path

    @property
    def disk(self) -> Path:
        return self.where / "disk.qcow2"

    @property
    def ram(self) -> Path:
        return self.where / "ram.state"

    def guest_clock(self) -> float:
        """The guest's clock (seconds since the epoch) when it was saved."""
        return float(json.loads((self.where / "saved.json").read_text())["guest_clock"])


def kind_of(guest: Guest, even_booting: bool = False) -> Kind | None:
    """The kind `guest` restores from, or None if it must boot. `even_booting`:
    a guest that asked to boot is restored too (to compare the two)."""
    if ((guest.boots and not even_booting) or guest.firmware != "bios" or guest.disk_size
            or guest.tty1_ui or guest.qmp is None or guest.disk_bus != "virtio"
            or guest.display != "none" or any(n.model != "virtio-net-pci" for n in guest.nics)
            or guest.image != dev_image()):
        return None
    return Kind(guest.smp, guest.memory, len(guest.nics), guest.drives)


def _template(kind: Kind, workdir: Path, sockdir: Path, accel: accel_mod.Accel) -> Guest:
    """The guest a kind is saved from: its NICs on no link, with the kind's MACs."""
    guest = Guest("saved", workdir, smp=kind.smp, memory=kind.memory, drives=kind.drives,
                  accel=accel, qmp=sockdir / "saved.qmp")
    guest.overlay = workdir / "disk.qcow2"
    guest.log_path = workdir / "console.log"
    guest.nics = [Nic(link=f"n{i}", mac=template_mac(i), local=sockdir / f"n{i}.0",
                      remote=sockdir / f"n{i}.1") for i in range(kind.nics)]
    return guest


@cache
def _qemu_version() -> str:
    return subprocess.run([accel_mod.QEMU, "--version"], capture_output=True, text=True,
                          check=True).stdout.splitlines()[0]


def _image_id() -> list[int]:
    image = dev_image().stat()
    return [image.st_size, image.st_mtime_ns]


def _prune() -> None:
    """Remove the states saved from another dev image than today's (with the lock held)."""
    for entry in CACHE.iterdir():
        if not entry.is_dir():
            continue
        try:
            image = json.loads((entry / "saved.json").read_text()).get("image")
        except (OSError, ValueError):
            image = None
        if image != _image_id():
            shutil.rmtree(entry, ignore_errors=True)


def key(kind: Kind, accel: accel_mod.Accel) -> str:
    """The directory name of `kind`'s saved state: what it was saved from."""
    argv = _template(kind, Path("/W"), Path("/S"), accel).qemu_argv()
    drives = [(str(d), d.stat().st_size, d.stat().st_mtime_ns) for d in kind.drives]
    text = json.dumps([argv, _image_id(), drives, _qemu_version()])
    return (f"smp{kind.smp}-m{kind.memory}-nic{kind.nics}-d{len(kind.drives)}-"
            + hashlib.sha256(text.encode()).hexdigest()[:16])


def saved(kinds: Iterable[Kind], accel: accel_mod.Accel,
          timeout: float = BOOT_TIMEOUT) -> dict[Kind, Saved]:
    """Each kind's saved state; the kinds not saved yet are booted side by
    side and saved first (one lane at a time: the others wait here)."""
    kinds = set(kinds)
    if not kinds:
        return {}
    CACHE.mkdir(parents=True, exist_ok=True)
    found = {k: Saved(k, CACHE / key(k, accel)) for k in kinds}
    with open(CACHE / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        missing = [s for s in found.values() if not (s.where / "saved.json").is_file()]
        missing += [s for s in found.values() if s not in missing and not _readable(s)]
        if missing:
            _prune()
            _save(missing, accel, timeout)
    return found


def _readable(state: Saved) -> bool:
    """Saved by this version of the lab (its record has what a restore reads)."""
    try:
        state.guest_clock()
    except (OSError, ValueError, KeyError, TypeError):
        return False
    return True


def _save(missing: list[Saved], accel: accel_mod.Accel, timeout: float) -> None:
    began = time.monotonic()
    build = CACHE / f"build-{os.getpid()}"
    shutil.rmtree(build, ignore_errors=True)
    sockdir = Path(tempfile.mkdtemp(prefix="keel-saved-"))
    guests: list[tuple[Saved, Guest]] = []
    try:
        for i, s in enumerate(missing):
            work = build / str(i)
            sock = sockdir / str(i)
            sock.mkdir()
            guests.append((s, _template(s.kind, work, sock, accel)))
        for _, guest in guests:
            guest.start()
        log_in_all([g for _, g in guests], timeout)  # (and their boot's apply ended)
        for s, guest in guests:
            guest.check("sync")
            # the guest's clock as it stops (it does not run while saved): a
            # restore steps it by the time since, measured on the host
            clock = float(guest.check("date +%s.%N"))
            _pause_and_save(guest, build / "ram.state.tmp")
            guest.stop()
            where = s.where.with_name(s.where.name + ".tmp")
            shutil.rmtree(where, ignore_errors=True)
            where.mkdir()
            (build / "ram.state.tmp").rename(where / "ram.state")
            guest.overlay.rename(where / "disk.qcow2")
            (where / "saved.json").write_text(json.dumps(
                {"kind": repr(s.kind), "image": _image_id(), "saved_at": time.time(),
                 "guest_clock": clock}) + "\n")
            shutil.rmtree(s.where, ignore_errors=True)
            where.rename(s.where)
        SAVES.append((tuple(s.where.name for s in missing), time.monotonic() - began,
                      sum(g.cpu_used for _, g in guests)))
    except BaseException:
        for _, guest in guests:
            guest.stop()
        print(f"\nconsole logs of the guests being saved kept in {build}", file=sys.stderr)
        raise
    finally:
        shutil.rmtree(sockdir, ignore_errors=True)
    shutil.rmtree(build, ignore_errors=True)


def _pause_and_save(guest: Guest, path: Path) -> None:
    with Qmp(guest.qmp, what=f"saving {guest.workdir.name}") as qmp:
        qmp.command("stop")
        qmp.command("migrate-set-parameters", **{"max-bandwidth": 1 << 40})
        qmp.command("migrate", uri=f"file:{path}")
        _migration_done(qmp, f"saving {guest.workdir.name}")


# QEMU's migration states that are still on the way (any other one has ended;
# None: an incoming one not begun yet reports no status)
MIGRATING = (None, "none", "setup", "active", "device", "wait-unplug")


def _migration_done(qmp: Qmp, what: str, timeout: float = 600) -> None:
    """Wait until the migration has ended; LabError unless it completed (or
    it is still on the way after `timeout` seconds: a bound on a hang)."""
    end = time.monotonic() + timeout
    while (status := (qmp.command("query-migrate") or {}).get("status")) in MIGRATING:
        if time.monotonic() > end:
            raise LabError(f"{what}: the migration still {status} after {timeout:.0f} s")
        time.sleep(0.1)
    if status != "completed":
        raise LabError(f"{what}: the migration {status}")


def restore(guests: list[tuple[Guest, Saved]], timeout: float = BOOT_TIMEOUT) -> list[str]:
    """Start each guest from its saved state and make it its own
    (refresh_command), side by side; the names of those restored. A guest
    whose state does not load is booted instead, with a LAB WARNING."""
    loaded: list[tuple[Guest, str, str, float]] = []
    for guest, state in guests:
        try:
            _load(guest, state, timeout)
        except LabError as err:
            print(f"\n*** LAB WARNING: {guest.name}: restoring {state.where.name} failed "
                  f"({err}); booting it instead", file=sys.stderr, flush=True)
            guest.stop()
            guest.boot()
            continue
        macs = [(template_mac(i), nic.mac) for i, nic in enumerate(guest.nics)]
        sent = time.time()
        cmd = refresh_command(macs, sent - state.guest_clock())
        loaded.append((guest, cmd, guest.console.begin(cmd, timeout * 2), sent))
    for guest, cmd, tag, sent in loaded:
        guest.console.end(cmd, tag, timeout * 2).check()
        # the clock as the step left it, between the command's start and end
        # (its `keel apply --boot` takes minutes on a loaded host, over which
        # an emulated guest's clock may run slow: docs/lab.md)
        guest.clock_at_restore = (sent, float(guest.check(f"cat {CLOCK_STEPPED}")), time.time())
        guest.prioritize()
    return [guest.name for guest, _, _, _ in loaded]


def _load(guest: Guest, state: Saved, timeout: float) -> None:
    guest.workdir.mkdir(parents=True, exist_ok=True)
    subprocess.run(["cp", "--reflink=auto", str(state.disk), str(guest.overlay)], check=True)
    guest.spawn([*guest.qemu_argv(), "-incoming", f"file:{state.ram}"], append=False)
    with Qmp.connect(guest.qmp, guest.accel.scale(timeout), what=f"{guest.name}: restore") as qmp:
        _migration_done(qmp, f"{guest.name}: restoring {state.where.name}")
        qmp.command("cont")


# every save in this process: (the kinds' directories, seconds from the first
# QEMU's start to the last state written, CPU seconds of their QEMUs);
# `make test` prints them
SAVES: list[tuple[tuple[str, ...], float, float]] = []


def refresh_command(macs: list[tuple[str, str]], behind: float) -> str:
    """The shell command that makes a restored guest its own (the module's
    docstring says what): `macs` pairs each NIC's saved MAC with its lab's;
    `behind`, how many seconds the guest's clock is behind (the time since it
    was saved), added to it in the guest (a long command line takes seconds
    to reach a loaded guest).

    The order keeps what a boot leaves: the daemons go first (dhcpcd takes
    the link-local addresses it made with it), then each NIC, down, gets its
    new address and comes back up only if it was up, with the kernel's
    default address generation, so that the kernel makes its link-local
    address from the new MAC as at boot; `keel apply --boot` then starts the
    daemons again, as the boot did after the NICs came up."""
    steps = ["t=$(date +%s.%N) && date -s @$(awk -v t=$t "
             f"'BEGIN {{ printf \"%.3f\", t + {behind:.3f} }}') >/dev/null && "
             f"date +%s.%N > {CLOCK_STEPPED}",
             f"for d in {' '.join(MAC_DAEMONS)}; do pkill -x $d; done; n=0; "
             f"while pgrep -x '{'|'.join(MAC_DAEMONS)}' >/dev/null && [ $n -lt 50 ]; do "
             "sleep 0.1; n=$((n + 1)); done; true"]
    for old, new in macs:
        steps.append(f"dev=$(grep -l -x {old} /sys/class/net/*/address) && "
                     "dev=${dev%/address} && dev=${dev##*/} && "
                     "up=$(( $(cat /sys/class/net/$dev/flags) & 1 )) && "
                     "echo 0 > /proc/sys/net/ipv6/conf/$dev/addr_gen_mode && "
                     f"ip link set dev $dev down && ip link set dev $dev address {new} && "
                     "if [ $up = 1 ]; then ip link set dev $dev up; fi")
    steps += [f"rm -f {' '.join(IDENTITY)}",
              "/etc/init.d/S45dropbear stop; sleep 0.2; /etc/init.d/S45dropbear start",
              "keel apply --boot"]
    return " && ".join(f"{{ {s}; }}" for s in steps)
