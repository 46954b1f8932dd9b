"""The upgrade's real side: RAUC's command line (its D-Bus service does the
writing), grubenv on the ESP, /proc/cmdline, the tunnel's sessions. Nothing
here is reached through a shell: argv lists only."""

from __future__ import annotations

import configparser
import errno
import hashlib
import json
import os
import re
import select
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from keel.system.console import cmdline
from keel.system.mounts import mount_source
from keel.thresholds import HANDSHAKE_STALE_S
from keel.upgrade import grubenv, slots
from keel.upgrade.record import Outcome, Records
from keel.version import image_version

GRUBENV = Path("/boot/EFI/BOOT/grubenv")
SYSTEM_CONF = Path("/etc/rauc/system.conf")
# what RAUC needs of the kernel to open a verity bundle (keel.kernel_features
# lists them; the Debian kernel has them as modules)
MODULES = ("loop", "dm_mod", "dm_verity")
PROGRESS = re.compile(r"^\s*(\d{1,3})% (.*)$")
INSTALL_TIMEOUT = 1800
# what `rauc mount` prints: where the bundle is (RAUC 1.13: "Mounted bundle
# at /run/rauc/mnt/bundle. Use 'umount /run/rauc/mnt/bundle' to unmount.")
MOUNTED = re.compile(r"^Mounted bundle at (/[\x21-\x7e]{1,200}?)\.?(?: |$)", re.M)
MAX_MANIFEST = 64 * 1024
CORRUPT = ("the bundle is corrupt (its contents do not match its signature): "
           "refused, nothing written")
UNTRUSTED = ("the bundle is not signed by a key this router trusts (its signature does not "
             "verify against /etc/rauc/keyring.pem): refused, nothing written")
# OpenSSL's words (through RAUC) for a signer the keyring does not hold
UNTRUSTED_SAID = re.compile(r"self[- ]signed certificate|unable to get local issuer|"
                            r"unable to get issuer certificate|certificate signature failure",
                            re.I)


class UpgradeError(RuntimeError):
    """One line for the user: what was refused or failed, and why."""


def one_line(text: str, limit: int = 200) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[:limit - 3] + "..."


def compatible(conf: Path = SYSTEM_CONF) -> str:
    match = re.search(r"^compatible\s*=\s*(\S+)\s*$", conf.read_text(), re.M)
    if not match:
        raise UpgradeError(f"{conf} names no compatible")
    return match.group(1)


def _run(argv: list[str], timeout: float = 60) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(argv, capture_output=True, text=True, timeout=timeout, check=False)
    except FileNotFoundError:
        raise UpgradeError(f"{argv[0]} is not installed") from None
    except subprocess.TimeoutExpired:
        raise UpgradeError(f"`{' '.join(argv[:3])}` took more than {timeout:.0f} s") from None


# RAUC's informational lines (GLib's g_message), not its answer
NOISE = re.compile(r"^(\(rauc:\d+\): )?rauc[-\w]*[- ](Message|WARNING \*\*):")


def said(text: str) -> str:
    """What RAUC said, less its informational lines: one line."""
    return one_line(" ".join(x for x in text.splitlines() if x.strip() and not NOISE.match(x)))


def rauc(*args: str, timeout: float = 60) -> str:
    proc = _run(["rauc", *args], timeout)
    if proc.returncode != 0:
        raise UpgradeError(f"rauc {args[0]}: {said(proc.stderr + proc.stdout) or 'failed'}")
    return proc.stdout


def last_error() -> str:
    """RAUC's service's LastError (why the last install failed), or ""."""
    proc = _run(["dbus-send", "--system", "--print-reply", "--dest=de.pengutronix.rauc", "/",
                 "org.freedesktop.DBus.Properties.Get", "string:de.pengutronix.rauc.Installer",
                 "string:LastError"], 10)
    match = re.search(r'string "(.*)"', proc.stdout, re.S)
    return one_line(match.group(1)) if proc.returncode == 0 and match else ""


def load_modules() -> None:
    for module in MODULES:
        _run(["modprobe", "-q", module])


@dataclass(frozen=True)
class BundleInfo:
    compatible: str
    version: str


def bundle_info(path: str) -> BundleInfo:
    """The bundle's compatible and version, its signature checked against the
    image's keyring (rauc info refuses a bad signature or a damaged file;
    a signer the keyring does not hold is said as UNTRUSTED)."""
    load_modules()
    try:
        text = rauc("info", "--output-format=json", path, timeout=300)
    except UpgradeError as err:
        if UNTRUSTED_SAID.search(str(err)):
            raise UpgradeError(UNTRUSTED) from None
        raise
    try:
        data = json.loads(text)
        return BundleInfo(str(data["compatible"])[:64], str(data["version"])[:64])
    except (ValueError, KeyError, TypeError):
        raise UpgradeError("rauc info printed no compatible and version") from None


@dataclass(frozen=True)
class Image:
    """One image of a bundle as its signed manifest names it."""

    filename: str
    size: int | None
    sha256: str | None


def manifest_images(text: str) -> list[Image]:
    """The [image.*] sections of a bundle's manifest.raucm (signed: from the
    mounted bundle), strictly: a plain file name, a size, a sha256."""
    if len(text) > MAX_MANIFEST:
        raise UpgradeError("the bundle's manifest is too long")
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read_string(text)
    except configparser.Error:
        raise UpgradeError("the bundle's manifest cannot be read") from None
    images = []
    for section in parser.sections():
        if not section.startswith("image."):
            continue
        name = parser.get(section, "filename", fallback="")
        size = parser.get(section, "size", fallback=None)
        digest = parser.get(section, "sha256", fallback=None)
        if not re.fullmatch(r"[\w.+-]{1,100}", name) or name.startswith("."):
            raise UpgradeError(f"the bundle's manifest names an odd image file in [{section}]")
        if size is not None and not re.fullmatch(r"\d{1,15}", size):
            raise UpgradeError(f"the bundle's manifest has an odd size in [{section}]")
        if digest is not None and not re.fullmatch(r"[0-9a-f]{64}", digest):
            raise UpgradeError(f"the bundle's manifest has an odd sha256 in [{section}]")
        images.append(Image(name, None if size is None else int(size), digest))
    if not images:
        raise UpgradeError("the bundle's manifest names no image")
    return images


def check_payload(path: str, progress: Callable[[int, str], None]) -> int:
    """Every byte of the bundle's images read through dm-verity (`rauc mount`:
    the signature checked again, the data mounted under the verity root hash
    it signs): a changed block is EIO here, before anything is written. Each
    image's size is compared with the manifest; then the mounted device is
    read raw, every block once (where the mount has no device, as in tests,
    each image's file is read and its sha256 compared). Costs one read of
    the payload. Returns the bytes read; UpgradeError(CORRUPT)."""
    load_modules()
    proc = _run(["rauc", "mount", path], 300)
    out = proc.stdout + "\n" + proc.stderr  # the line is g_print's (stdout); either will do
    if proc.returncode != 0:
        if UNTRUSTED_SAID.search(out):
            raise UpgradeError(UNTRUSTED)
        raise UpgradeError(f"rauc mount: {said(proc.stderr + proc.stdout) or 'failed'}")
    match = MOUNTED.search(out)
    if match is None:  # not left mounted: RAUC mounts at <mountprefix>/bundle
        _run(["umount", str(mount_prefix() / "bundle")], 60)
        raise UpgradeError(f"rauc mount said no mount point: {said(out) or 'nothing'}")
    where = Path(match.group(1))
    try:
        manifest = (where / "manifest.raucm").read_bytes()[:MAX_MANIFEST + 1]
        images = manifest_images(manifest.decode("utf-8", "replace"))
        sizes = [(where / i.filename).stat().st_size for i in images]
        for image, size in zip(images, sizes, strict=True):
            if image.size is not None and size != image.size:
                raise UpgradeError(CORRUPT)
        if (device := mount_source(where)) is not None:
            # the mounted device itself (dm-verity over the bundle): every
            # block of it read once, raw, checks the whole payload against
            # the signed root hash; no decompression, no second hash
            return _read_through(device, progress)
        total = sum(sizes) or 1
        done = 0
        for image in images:
            digest = hashlib.sha256()
            with (where / image.filename).open("rb", buffering=0) as f:
                while chunk := f.read(1 << 20):
                    digest.update(chunk)
                    done += len(chunk)
                    progress(min(100, done * 100 // total), f"checking {image.filename}")
            if image.sha256 is not None and digest.hexdigest() != image.sha256:
                raise UpgradeError(CORRUPT)
        return total
    except OSError as err:
        if err.errno == errno.EIO:
            raise UpgradeError(CORRUPT) from None
        raise UpgradeError(f"cannot read the mounted bundle: {err.strerror or err}") from None
    finally:
        proc = _run(["umount", str(where)], 60)
        if proc.returncode != 0:
            raise UpgradeError(f"umount {where}: {said(proc.stderr) or 'failed'}")


def _read_through(device: Path, progress: Callable[[int, str], None]) -> int:
    """Every byte of `device` read (4 MiB at a time); its size. EIO from a
    block dm-verity refuses goes up as OSError."""
    fd = os.open(device, os.O_RDONLY)
    try:
        total = os.lseek(fd, 0, os.SEEK_END) or 1
        os.lseek(fd, 0, os.SEEK_SET)
        done = 0
        while chunk := os.read(fd, 4 << 20):
            done += len(chunk)
            progress(min(100, done * 100 // total), "checking the bundle")
        return total
    finally:
        os.close(fd)


def mount_prefix(conf: Path = SYSTEM_CONF) -> Path:
    """Where RAUC mounts bundles (system.conf's mountprefix, else RAUC's default)."""
    try:
        match = re.search(r"^mountprefix\s*=\s*(/\S+)\s*$", conf.read_text(), re.M)
    except OSError:
        match = None
    return Path(match.group(1) if match else "/mnt/rauc")


def slot_devices(bootname: str, conf: Path = SYSTEM_CONF) -> tuple[Path, ...]:
    """The devices RAUC writes for the slot booted as `bootname` (its root
    and the slots whose parent it is), from system.conf."""
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read_string(conf.read_text())
    except (OSError, configparser.Error):
        return ()
    slots_ = {s.removeprefix("slot."): parser[s] for s in parser.sections()
              if s.startswith("slot.")}
    root = next((n for n, v in slots_.items() if v.get("bootname") == bootname), None)
    if root is None:
        return ()
    return tuple(Path(v["device"]) for n, v in slots_.items()
                 if (n == root or v.get("parent") == root) and v.get("device"))


def install(path: str, progress: Callable[[int, str], None],
            written: Callable[[], int | None] = lambda: None, total: int = 0) -> None:
    """`rauc install`; progress(percent, RAUC's step) follows the bytes
    written to the slot (written(): a counter, from its start; of `total`)
    when both are known, else RAUC's own percent. UpgradeError when it fails."""
    load_modules()
    base = written()
    proc = subprocess.Popen(["rauc", "install", path], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT)
    assert proc.stdout is not None
    fd, pending, last, step, rauc_percent = proc.stdout.fileno(), b"", [], "", 0
    shown_: tuple[int, str] | None = None

    def tell(before: tuple[int, str] | None, rauc_said: int, what: str
             ) -> tuple[int, str] | None:
        now = written()
        if base is not None and now is not None and total > 0:
            percent = min(99, max(0, now - base) * 100 // total)
        else:
            percent = min(99, rauc_said)
        if what and (percent, what) != before:
            progress(percent, what)
            return percent, what
        return before

    deadline = time.monotonic() + INSTALL_TIMEOUT
    while time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.5)
        chunk = os.read(fd, 4096) if ready else b""
        if ready and not chunk:
            break
        pending += chunk
        *lines, pending = pending.split(b"\n")
        for raw in lines:  # each of RAUC's steps is said, at the bytes' percent
            line = raw.decode("utf-8", "replace")
            if match := PROGRESS.match(line):
                rauc_percent, step = min(100, int(match.group(1))), one_line(match.group(2), 60)
                shown_ = tell(shown_, rauc_percent, step)
            elif line.strip():
                last = [*last[-3:], line.strip()]
        shown_ = tell(shown_, rauc_percent, step)
    else:
        proc.kill()
    if proc.wait(timeout=60) != 0:
        reason = last_error() or said("\n".join(last)) or "no reason given"
        raise UpgradeError(f"rauc install: {reason}")
    progress(100, step or "installed")


def mark(state: str, slot: str = "booted") -> None:
    """rauc status mark-good|mark-bad|mark-active booted|other."""
    rauc("status", f"mark-{state}", slot)


def read_env() -> grubenv.BootEnv:
    try:
        return grubenv.parse(GRUBENV.read_bytes())
    except OSError as err:
        raise grubenv.GrubenvError(f"cannot read {GRUBENV}: {err.strerror}") from None


def boot_id() -> str:
    from keel.system.console import boot_id as this_boot

    return this_boot()


def alive(pid: int) -> bool:
    """The keel process that started an install still runs."""
    from keel.system.processes import keel_runs_as

    return keel_runs_as(pid)


def bytes_written(devices: tuple[Path, ...]) -> int | None:
    from keel.system.blocks import bytes_written as written

    return written(devices)


def record_cut(records: Records) -> Outcome | None:
    """An install record left by an earlier boot or a process gone: kept as
    the last outcome (INSTALL_CUT) and removed; returns it, or None."""
    live = records.installing()
    cut = live.cut(boot_id(), alive) if live is not None else None
    if cut is not None:
        records.set_last(cut)
        records.clear_installing()
    return cut


def read_status(records: Records | None = None) -> slots.UpgradeStatus:
    records = records or Records()
    problems = []
    booted = slots.booted_slot(cmdline())
    try:
        env = read_env()
    except grubenv.GrubenvError as err:
        env, problems = None, [str(err)]
    try:
        versions = slots.parse_rauc_versions(
            rauc("status", "--detailed", "--output-format=json", timeout=30))
    except (UpgradeError, slots.StatusError) as err:
        versions = {}
        problems.append(str(err))
    # RAUC knows what it installed; keel what each slot ran (slot A as flashed)
    versions = {**records.versions(), **versions}
    last, live = records.last(), records.installing()
    cut = live.cut(boot_id(), alive) if live is not None else None
    if cut is not None:  # an install that can no longer be running: cut
        live = None
        if last is None or cut.at >= last.at:
            last = cut
    return slots.build(booted, env, versions, image_version(), records.pending(),
                       last, "; ".join(problems), live)


def sessions(now: float | None = None) -> tuple[tuple[str, str], ...]:
    """Peers with a WireGuard session now: (public key, name to show)."""
    from keel.system.source import SourceError
    from keel.system.wireguard import read_wireguard

    now = time.time() if now is None else now
    try:
        interfaces = read_wireguard()
    except SourceError:
        return ()
    names = peer_names()
    out = []
    for interface in interfaces.values():
        for peer in interface.peers:
            age = peer.handshake_age(now)
            if age is not None and age < HANDSHAKE_STALE_S:
                out.append((peer.public_key, names.get(peer.public_key, peer.public_key[:8])))
    return tuple(out)


def peer_names() -> dict[str, str]:
    from keel.model.reading import InvalidConfig, config_in_force, read_model

    try:
        model = read_model(config_in_force())
    except (InvalidConfig, OSError):
        return {}
    peers = model.wireguard.peer if model.wireguard else ()
    return {p.public_key: p.name for p in peers if p.name}
