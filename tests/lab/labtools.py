"""The lab tools disk: what only the lab needs, never in the router image.

A small Debian root (mmdebstrap --variant=minbase, the dev image's suite and
mirror, read from board/keel/dev-image/build.sh) holding the isp's IPv6
internet side: Kea's DHCPv6 server (prefix delegation) and radvd (router
advertisements with the M flag: dnsmasq sets it only on a link where it is
the DHCPv6 server itself, and it delegates no prefixes), with iproute2 for the
server's route hook. It is a squashfs image, built once and cached under
out/cache, keyed by the suite, the package list and RECIPE; a guest gets it
as a second, read-only drive (Guest(..., drives=(disk(),))) and runs the
servers by chroot into it (mount_command; tests/lab/dhcpv6.py starts them).

    python3 -m tests.lab.labtools [--force]   build it (if missing), say where
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tests.lab.paths import OUT, TOP, LabError

BUILD_SH = TOP / "board" / "keel" / "dev-image" / "build.sh"
CACHE = OUT / "cache"
PACKAGES = ("kea-dhcp6-server", "radvd", "iproute2")
RECIPE = 1  # bumped when the recipe below changes what the disk holds
MARKER = "/etc/keel-labtools"  # in the disk: its packages and their versions
ROOT = "/run/labtools"  # where a guest mounts it (mount_command)
# in the chroot, written at run time (tmpfs): the servers' files
WRITABLE = ("/run", "/tmp", "/var/lib/kea")
# as build.sh: no manuals, documentation or translations
DPKG_OPTS = ("path-exclude=/usr/share/man/*", "path-exclude=/usr/share/doc/*",
             "path-include=/usr/share/doc/*/copyright", "path-exclude=/usr/share/locale/*",
             "path-exclude=/usr/share/info/*")


def build_sh_settings(text: str) -> tuple[str, str]:
    """(suite, default mirror) from build.sh's `SUITE=...` and
    `MIRROR=${KEEL_DEBIAN_MIRROR:-...}` lines: the dev image's, one source."""
    suite = re.search(r"^SUITE=([a-z]+)$", text, re.MULTILINE)
    mirror = re.search(r"^MIRROR=\$\{KEEL_DEBIAN_MIRROR:-(\S+)\}$", text, re.MULTILINE)
    if not suite or not mirror:
        raise LabError(f"{BUILD_SH}: no SUITE=<name> or MIRROR=${{KEEL_DEBIAN_MIRROR:-<url>}} "
                       "line (the tools disk takes the dev image's suite and mirror from them)")
    return suite.group(1), mirror.group(1)


def suite_and_mirror() -> tuple[str, str]:
    suite, mirror = build_sh_settings(BUILD_SH.read_text())
    return suite, os.environ.get("KEEL_DEBIAN_MIRROR", mirror)


def cache_key(suite: str, packages: tuple[str, ...] = PACKAGES) -> str:
    recipe = "\n".join((suite, str(RECIPE), *sorted(packages), *DPKG_OPTS))
    return hashlib.sha256(recipe.encode()).hexdigest()[:16]


def disk_path(suite: str | None = None) -> Path:
    suite = suite or suite_and_mirror()[0]
    return CACHE / f"labtools-{suite}-{cache_key(suite)}.squashfs"


def _step(began: float, what: str) -> None:
    print(f"[labtools {time.monotonic() - began:4.0f}s] {what}", flush=True)


def _run(argv: list[str]) -> None:
    proc = subprocess.run(argv, check=False, stdout=sys.stdout, stderr=sys.stderr)
    if proc.returncode != 0:
        raise LabError(f"lab tools disk: `{shlex.join(argv[:2])} ...` exited {proc.returncode}")


def _build(out: Path, suite: str, mirror: str, began: float) -> None:
    debs = CACHE / "debs"  # shared with build.sh: .debs downloaded once
    debs.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="labtools-", dir=CACHE) as work:
        os.chmod(work, 0o755)  # apt downloads as _apt into the root below
        root = Path(work) / "root"
        _step(began, f"mmdebstrap {suite} minbase + {' '.join(PACKAGES)} "
              "(half a minute or more: it downloads)")
        # (customize hooks run on this host, the root in "$1")
        marker = ('chroot "$1" dpkg-query -W -f \'${Package} ${Version}\\n\' '
                  f'{" ".join(PACKAGES)} > "$1"{MARKER}')
        # mmdebstrap's own progress goes to the terminal
        _run(["mmdebstrap", "--variant=minbase", f"--include={','.join(PACKAGES)}",
              *(f"--dpkgopt={opt}" for opt in DPKG_OPTS),
              "--format=directory", "--skip=download/empty", "--skip=essential/unlink",
              '--setup-hook=mkdir -p "$1"/var/cache/apt/archives/',
              f"--setup-hook=sync-in {debs} /var/cache/apt/archives/",
              f"--customize-hook=sync-out /var/cache/apt/archives {debs}",
              f"--customize-hook={marker}",
              '--customize-hook=rm -rf "$1"/var/cache/apt/* "$1"/var/lib/apt/lists/* '
              '"$1"/var/log/*',
              *(f'--customize-hook=mkdir -p "$1"{d}' for d in WRITABLE),
              suite, str(root), mirror])
        _step(began, "squashfs (zstd)")
        tmp = out.with_suffix(".tmp")
        _run(["mksquashfs", str(root), str(tmp), "-comp", "zstd", "-noappend", "-quiet",
              "-no-progress"])
        tmp.replace(out)


def disk(force: bool = False) -> Path:
    """The tools disk, built first if it is not in the cache (as root, as the
    dev image; a lock keeps two lab processes from building it twice)."""
    suite, mirror = suite_and_mirror()
    out = disk_path(suite)
    if out.is_file() and not force:
        return out
    if os.geteuid() != 0:
        raise LabError(f"the lab tools disk ({out}) is not built: building it needs root "
                       "(mmdebstrap, as build.sh): run `python3 -m tests.lab.labtools` as root")
    for tool in ("mmdebstrap", "mksquashfs"):
        if shutil.which(tool) is None:
            raise LabError(f"lab tools disk: no {tool} on this host "
                           "(board/keel/dev-image/host-deps.sh installs it)")
    CACHE.mkdir(parents=True, exist_ok=True)
    with open(CACHE / "labtools.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if out.is_file() and not force:
            return out  # another process built it while this one waited
        began = time.monotonic()
        _build(out, suite, mirror, began)
        size = out.stat().st_size / (1 << 20)
        _step(began, f"done: {out} ({size:.1f} MiB)")
    return out


def mount_command(device: str = "/dev/vdb", root: str = ROOT) -> str:
    """A guest's shell command: the tools disk at `root`, read-only, with
    tmpfs where its servers write and the guest's /dev, /proc and /sys bound
    in for chroot; checks it is the tools disk; does nothing if mounted.
    `device`: the guest's second virtio drive is vdb."""
    r = shlex.quote(root)
    mounts = [f"mount -t squashfs -o ro {shlex.quote(device)} {r}"]
    mounts += [f"mount -t tmpfs -o mode=0755 labtools {r}{d}" for d in WRITABLE]
    mounts += [f"mount --bind /{d} {r}/{d}" for d in ("dev", "proc", "sys")]
    return (f"if ! mountpoint -q {r}; then mkdir -p {r} && " + " && ".join(mounts) + "; fi && "
            f"test -f {r}{MARKER}")


def main(argv: list[str]) -> int:
    force = "--force" in argv
    began = time.monotonic()
    out = disk(force=force)
    size = out.stat().st_size / (1 << 20)
    print(f"{out}: {size:.1f} MiB ({time.monotonic() - began:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
