"""One QEMU guest booted from a copy-on-write overlay of the dev image."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pexpect

from tests.lab import accel as accel_mod
from tests.lab import priority
from tests.lab.console import Console, Result
from tests.lab.paths import EmulatorCrash, LabError, dev_image, ovmf

# seconds to a login prompt at KVM speed; scaled for TCG and a busy host. A
# bound on a hang, not a verdict: a CI run's tunnel lab, booting beside two
# other lanes on a slower 2-core machine, reached its login after 320 s
BOOT_TIMEOUT = 60
# the boot's `keel apply --boot` has ended: its record, written last, on /run.
# A login waits for it: S40keel lets the boot go on without a late apply (on
# a loaded host, past 100 s of uptime), whose lines on the serial console then
# came amid a later command's output ("keel: applied revision 1" read as the
# first line of `findmnt`'s)
APPLIED = "/run/keel/boot-fallback.json"
# seconds (scaled, as BOOT_TIMEOUT) for the apply, once logged in: a bound on a hang
APPLY_TIMEOUT = 200
# KEEL_LAB_STAMP=1: each console log line starts with the seconds since this
# process began (to see where a lab's time goes; the logs are kept on a
# failure, or always with KEEL_KEEP_LOGS=1)
STAMP = os.environ.get("KEEL_LAB_STAMP") == "1"
_T0 = time.monotonic()


class StampedLog:
    """A console log that marks each line with the seconds since _T0."""

    def __init__(self, f) -> None:
        self.f = f
        self.at_start = True

    def write(self, data: bytes) -> None:
        out = bytearray()
        for line in data.splitlines(keepends=True):
            if self.at_start:
                out += f"[{time.monotonic() - _T0:8.2f}] ".encode()
            out += line
            self.at_start = line.endswith(b"\n")
        self.f.write(bytes(out))

    def flush(self) -> None:
        self.f.flush()


# the QEMU device models a lab guest's disk hangs on (the lab's own: virtio)
DISK_BUSES = ("virtio", "scsi", "nvme", "ahci", "ide", "usb")
# what its screen is: none (the serial console only), QEMU's standard VGA, or
# virtio-vga (a KMS driver takes the screen from the firmware's framebuffer)
DISPLAYS = ("none", "std", "virtio")
# the NIC models a lab link may use, as QEMU names them
NIC_MODELS = ("virtio-net-pci", "e1000", "e1000e", "igb", "rtl8139", "vmxnet3")


@dataclass(frozen=True)
class Nic:
    link: str
    mac: str
    local: Path  # our unix datagram socket
    remote: Path  # the other end's
    model: str = "virtio-net-pci"


def disk_args(bus: str, overlay: Path) -> list[str]:
    """QEMU arguments for the boot disk on `bus` (one of DISK_BUSES)."""
    if bus == "virtio":
        return ["-drive", f"file={overlay},if=virtio,format=qcow2"]
    drive = ["-drive", f"file={overlay},if=none,id=boot,format=qcow2"]
    devices = {
        "scsi": ["-device", "virtio-scsi-pci,id=scsi0",
                 "-device", "scsi-hd,drive=boot,bus=scsi0.0,bootindex=0"],
        "nvme": ["-device", "nvme,drive=boot,serial=keel-boot,bootindex=0"],
        "ahci": ["-device", "ide-hd,drive=boot,bus=ide.0,bootindex=0"],  # q35's own AHCI
        "ide": ["-device", "ide-hd,drive=boot,bus=ide.0,bootindex=0"],  # (the PC's PIIX)
        "usb": ["-device", "qemu-xhci,id=xhci",
                "-device", "usb-storage,drive=boot,bus=xhci.0,bootindex=0"],
    }
    if bus not in devices:
        raise LabError(f"disk bus {bus!r}: not one of {', '.join(DISK_BUSES)}")
    return drive + devices[bus]


class Guest:
    def __init__(self, name: str, workdir: Path, *, firmware: str = "bios",
                 memory: int = 512, smp: int = 2, disk_size: str | None = None,
                 image: Path | None = None, accel: accel_mod.Accel | None = None,
                 tty1_ui: bool = False, drives: tuple[Path, ...] = (),
                 qmp: Path | None = None, boots: bool = False, disk_bus: str = "virtio",
                 display: str = "none") -> None:
        if firmware not in ("bios", "uefi"):
            raise LabError(f"{name}: firmware must be 'bios' or 'uefi', not {firmware!r}")
        if disk_bus not in DISK_BUSES or display not in DISPLAYS:
            raise LabError(f"{name}: disk bus {disk_bus!r} (one of {DISK_BUSES}) or display "
                           f"{display!r} (one of {DISPLAYS}) unknown")
        self.disk_bus, self.display = disk_bus, display
        self.name = name
        self.workdir = workdir
        self.firmware = firmware
        self.memory = memory
        self.smp = smp
        # the console UI on tty1 polls the router once a second: under software
        # emulation that is a share of the guest's CPU the latency tests must
        # not carry, so it is turned off after the login unless asked for
        self.tty1_ui = tty1_ui
        self.disk_size = disk_size
        # more disks, read-only raw images (the upgrade lab's bundles)
        self.drives = tuple(drives)
        # QEMU's machine protocol socket (tests/lab/keyboard.py types on the
        # guest's keyboard through it), or None
        self.qmp = qmp
        # boots even where a saved state of its kind could be restored
        # (tests/lab/saved.py): the tests of what a boot does
        self.boots = boots
        self.image = image or dev_image()
        self.accel = accel or accel_mod.detect()
        self.nics: list[Nic] = []
        self.overlay = workdir / f"{name}.qcow2"
        self.log_path = workdir / f"{name}.console.log"
        self.child: pexpect.spawn | None = None
        self.console: Console | None = None
        self._log = None
        self._ifnames: dict[str, str] = {}
        # CPU and wall seconds of every QEMU this guest has run (power cuts
        # start a new one), counted when each stops
        self.cpu_used = 0.0
        self.lived = 0.0
        # restored (tests/lab/saved.py): the host's time before and after the
        # guest's clock was read, once its restore had stepped it, and that clock
        self.clock_at_restore: tuple[float, float, float] | None = None

    # --- lifecycle --------------------------------------------------------
    @property
    def applied_record(self) -> str:
        """The file whose presence says the boot's apply has ended (APPLIED;
        a stand-in for QEMU in the unit tests names its own)."""
        return APPLIED

    def qemu_argv(self) -> list[str]:
        # an IDE disk hangs on the PIIX of QEMU's older PC (i440FX); every other on q35
        machine = "pc" if self.disk_bus == "ide" else "q35"
        argv = [accel_mod.QEMU, *self.accel.qemu_args(), "-machine", machine,
                "-smp", str(self.smp), "-m", str(self.memory),
                "-nodefaults", "-no-user-config", "-display", "none",
                "-chardev", "stdio,id=con0,signal=off", "-serial", "chardev:con0",
                "-monitor", "none", "-device", "virtio-rng-pci",
                # a new generation id on every start: a guest restored from a
                # saved state (tests/lab/saved.py) reseeds its random generator
                "-device", "vmgenid",
                # a watchdog, as Proxmox and libvirt VPSes offer (reset on expiry)
                "-device", "i6300esb", "-action", "watchdog=reset",
                *disk_args(self.disk_bus, self.overlay)]
        if self.display != "none":
            argv += ["-device", {"std": "VGA", "virtio": "virtio-vga"}[self.display]]
        if self.qmp is not None:
            argv += ["-qmp", f"unix:{self.qmp},server=on,wait=off"]
        for drive in self.drives:
            argv += ["-drive", f"file={drive},if=virtio,format=raw,readonly=on"]
        if self.firmware == "uefi":
            argv += ["-bios", str(ovmf())]
        for i, nic in enumerate(self.nics):
            argv += ["-netdev", (f"dgram,id=n{i},local.type=unix,local.path={nic.local},"
                                 f"remote.type=unix,remote.path={nic.remote}"),
                     "-device", f"{nic.model},netdev=n{i},mac={nic.mac}"]
        return argv

    def start(self, fresh: bool = True) -> None:
        """Create the overlay disk (fresh=False: keep the one there, as a
        machine keeps its disk across a power cut) and start QEMU; does not
        wait for the boot."""
        self.workdir.mkdir(parents=True, exist_ok=True)
        if fresh or not self.overlay.exists():
            create = ["qemu-img", "create", "-q", "-f", "qcow2", "-b", str(self.image),
                      "-F", "qcow2", str(self.overlay)]
            if self.disk_size:
                create.append(self.disk_size)
            subprocess.run(create, check=True)
        self.spawn(self.qemu_argv(), append=not fresh)

    def spawn(self, argv: list[str], append: bool) -> None:
        """Start QEMU with `argv` on the console; its log appended to if `append`."""
        # at this lane's nice value for a boot (tests/lab/priority.py); its
        # own once logged in (prioritize): the quiet lane's guests first
        nice = priority.boot_nice()
        argv = priority.niced(argv, nice)
        self._log = open(self.log_path, "ab" if append else "wb")  # noqa: SIM115 - closed in stop()
        self._log.write(("# " + " ".join(argv) + "\n").encode())
        self.child = pexpect.spawn(argv[0], argv[1:], logfile=None, timeout=None,
                                   echo=False, maxread=65536)
        priority.set_session_nice(self.child.pid, nice)
        self.child.logfile_read = StampedLog(self._log) if STAMP else self._log
        self.console = Console(self.child, self.name, self.accel.scale)

    def wait_for_login(self, timeout: float = BOOT_TIMEOUT) -> None:
        """Log in once booted, then wait for the boot's apply to end. If QEMU
        itself dies of an internal assertion before the login prompt (an
        emulator bug, seen under TCG), boot once more on a fresh overlay, and
        say so loudly; anything else fails."""
        try:
            self._console().login(timeout=timeout)
        except EmulatorCrash as crash:
            self.stop()
            kept = self.log_path.with_suffix(".crashed.log")
            self.log_path.replace(kept)
            print(f"\n*** LAB WARNING: {crash}; booting {self.name} once more "
                  f"(console log kept in {kept})", file=sys.stderr, flush=True)
            self.start()
            self._console().login(timeout=timeout)
        self.prioritize()
        self.until(f"test -e {self.applied_record}", max(timeout, APPLY_TIMEOUT), every=1)
        self._tty1()

    def prioritize(self) -> None:
        """Booted: this lane's nice value for its guests, if not the boot's
        (lower: the quiet lane's; root, as the lab runs)."""
        nice = priority.lane_nice()
        if self.child is not None and nice != priority.boot_nice():
            priority.set_nice(self.child.pid, nice)

    def _tty1(self) -> None:
        if not self.tty1_ui:
            # and the first boot's question (a root password, or none on
            # purpose) answered: none, as a console-only box
            self.check("mkdir -p /run/keel; touch /run/keel/tty1-off; "
                       "pkill -f 'keel tui --console'; keel access no-password >/dev/null; true")

    def boot(self) -> None:
        self.start()
        self.wait_for_login()

    def reboot(self, timeout: float = BOOT_TIMEOUT) -> None:
        """Reboot through init (rcK runs) and log in again."""
        console = self._console()
        console.child.sendline("reboot")
        console.expect(r"Restarting system|reboot: ", 30)
        self._ifnames.clear()
        self.wait_for_login(timeout)

    def power_cut(self) -> None:
        """QEMU killed (no shutdown, no flush by the guest), then started on
        the same disk; does not wait for the boot."""
        self.stop()
        self._ifnames.clear()
        self.start(fresh=False)

    def cpu_seconds(self) -> tuple[float, float] | None:
        """(CPU seconds, wall seconds) QEMU has used since this start; None
        if it is not running."""
        if self.child is None or not self.child.isalive():
            return None
        try:
            fields = Path(f"/proc/{self.child.pid}/stat").read_text().rsplit(")", 1)[1].split()
            uptime = float(Path("/proc/uptime").read_text().split()[0])
        except (OSError, IndexError, ValueError):
            return None
        tick = os.sysconf("SC_CLK_TCK")
        # fields[0] is the state (field 3): utime, stime, starttime are 14, 15, 22
        cpu = (int(fields[11]) + int(fields[12])) / tick
        return cpu, uptime - int(fields[19]) / tick

    def stop(self) -> None:
        if (used := self.cpu_seconds()) is not None:
            self.cpu_used += used[0]
            self.lived += used[1]
        if self.child is not None and self.child.isalive():
            self.child.terminate(force=True)
        if self.child is not None:
            self.child.close(force=True)
        if self._log is not None:
            self._log.close()
            self._log = None

    # --- shell --------------------------------------------------------------
    def _console(self) -> Console:
        if self.console is None:
            raise LabError(f"{self.name}: not started")
        return self.console

    def run(self, cmd: str, timeout: float = 30) -> Result:
        return self._console().run(cmd, timeout)

    def check(self, cmd: str, timeout: float = 30) -> str:
        return self._console().check(cmd, timeout)

    def until(self, cmd: str, timeout: float = 30, every: float = 0.5) -> str:
        """Run `cmd` in the guest until it succeeds (its output), or LabError
        after `timeout` seconds (scaled for emulation) with its last output."""
        seconds = self.accel.scale(timeout)
        loop = (f"end=$(( $(date +%s) + {seconds:.0f} )); ok=1; "
                f"until out=$( {cmd} 2>&1 ); do "
                f"if [ $(date +%s) -ge $end ]; then ok=0; break; fi; sleep {every}; done; "
                "printf '%s\\n' \"$out\"; [ $ok = 1 ]")
        return self._console().check(loop, timeout + 10)

    def write_file(self, path: str, content: str) -> None:
        self._console().write_file(path, content)

    def json(self, cmd: str, timeout: float = 30):
        return json.loads(self.check(cmd, timeout))

    # --- network ------------------------------------------------------------
    def ifname(self, link: str) -> str:
        """The guest's name for its NIC on `link` (found by MAC address)."""
        if not self._ifnames:
            by_mac = {entry.get("address"): entry["ifname"]
                      for entry in self.json("ip -j link show")}
            self._ifnames = {nic.link: by_mac.get(nic.mac, "") for nic in self.nics}
        name = self._ifnames.get(link)
        if not name:
            raise LabError(f"{self.name}: no interface on link {link!r}")
        return name


def log_in_all(guests: list[Guest], timeout: float) -> None:
    """Log in to every guest of `guests`, started side by side (each boot
    allowed for sharing the host's two cores with the others). Each guest
    has a thread of its own: logged in one after another, a guest's console
    went unread while the others were waited for, its pty filled and its
    serial line stalled its boot (of 5 guests, the last printed nothing in 6
    minutes). The first failure is raised once all have ended."""
    share = max(1.0, len(guests) / 2)
    with ThreadPoolExecutor(max_workers=max(1, len(guests))) as pool:
        logins = [pool.submit(g.wait_for_login, timeout * share) for g in guests]
        for login in logins:
            login.result()
