"""Which QEMU accelerator to use, and how much to scale timeouts for it.

KVM is used only when a trial boot with it really works: on some hosts
/dev/kvm exists but guests crash or hang. The trial boots the dev image's
kernel without a root filesystem and waits for its panic message; the answer
is cached per host boot. KEEL_ACCEL=kvm|tcg skips the trial, and
KEEL_TIMEOUT_FACTOR overrides the scaling.

A timeout is scaled once more for a busy host, at the moment it is set: by
the runnable tasks per core (the 1-minute load average), at most BUSY_CAP
times. On a 2-core machine running seven guests beside another lane, a
command that takes seconds idle took over two minutes (a CI run's pairing
lab); a timeout is a bound on a hang, never a verdict, so a longer one
weakens no test, and one that fails still fails, later.
"""

from __future__ import annotations

import json
import os
import subprocess
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from tests.lab.paths import DEV_KERNEL, OUT

QEMU = os.environ.get("KEEL_QEMU", "qemu-system-x86_64")
TRIAL_SECONDS = 20
TCG_FACTOR = 4.0
BUSY_CAP = 3.0  # a hang still fails within three times its emulation timeout


@dataclass(frozen=True)
class Accel:
    name: str  # "kvm" or "tcg"
    timeout_factor: float
    reason: str
    load_aware: bool = True  # scaled for a busy host too (not with KEEL_TIMEOUT_FACTOR)

    def qemu_args(self) -> list[str]:
        if self.name == "kvm":
            return ["-accel", "kvm", "-cpu", "host"]
        return ["-accel", "tcg", "-cpu", "max"]

    def scale(self, seconds: float) -> float:
        return seconds * self.timeout_factor * (busy() if self.load_aware else 1.0)


def busy(load: float | None = None, cores: int | None = None) -> float:
    """How much longer than its share of the host a wait may take now: the
    runnable tasks per core (a busy vCPU is one), at least 1, at most BUSY_CAP."""
    load = os.getloadavg()[0] if load is None else load
    cores = cores or os.cpu_count() or 1
    return min(BUSY_CAP, max(1.0, load / cores))


def _boot_id() -> str:
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        return "unknown"


def kvm_trial(kernel: Path = DEV_KERNEL) -> tuple[bool, str]:
    """Boot `kernel` under KVM with no root; True if it reaches its panic."""
    if not os.access("/dev/kvm", os.R_OK | os.W_OK):
        return False, "/dev/kvm is missing or not accessible"
    if not kernel.is_file():
        return False, f"no kernel at {kernel} for the KVM trial"
    cmd = [QEMU, "-accel", "kvm", "-cpu", "host", "-m", "256", "-nodefaults",
           "-display", "none", "-serial", "stdio", "-monitor", "none", "-no-reboot",
           "-kernel", str(kernel), "-append", "console=ttyS0 panic=-1 root=/dev/null"]
    try:
        proc = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True,
                              timeout=TRIAL_SECONDS, check=False)
    except subprocess.TimeoutExpired:
        return False, f"a KVM trial boot did not finish in {TRIAL_SECONDS} s"
    out = proc.stdout.decode(errors="replace")
    if "Kernel panic" in out or "VFS: Unable to mount root" in out:
        return True, "a KVM trial boot worked"
    return False, f"a KVM trial boot failed (exit {proc.returncode})"


@cache
def detect() -> Accel:
    factor_env = os.environ.get("KEEL_TIMEOUT_FACTOR")
    forced = os.environ.get("KEEL_ACCEL")
    if forced in ("kvm", "tcg"):
        ok, reason = forced == "kvm", f"KEEL_ACCEL={forced}"
    else:
        cache_file = OUT / "lab-runs" / "accel.json"
        try:
            cached = json.loads(cache_file.read_text())
        except (OSError, ValueError):
            cached = {}
        if cached.get("boot_id") == _boot_id():
            ok, reason = cached["kvm"], cached["reason"] + " (cached)"
        else:
            ok, reason = kvm_trial()
            cache_file.parent.mkdir(parents=True, exist_ok=True)
            cache_file.write_text(json.dumps({"boot_id": _boot_id(), "kvm": ok,
                                              "reason": reason}))
    name = "kvm" if ok else "tcg"
    factor = float(factor_env) if factor_env else (1.0 if ok else TCG_FACTOR)
    return Accel(name=name, timeout_factor=factor, reason=reason, load_aware=not factor_env)
