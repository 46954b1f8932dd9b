"""Bundles for the upgrade lab, made from the built dev image's slot images
(out/dev/images: boot.vfat, rootfs.squashfs, version) with the dev signing key
(out/keys), the way `make bundle` makes them: a good one with a new version,
broken ones made from it on purpose, and ones the router must refuse. They go
on an ext4 disk image the edge gets as a second, read-only disk."""

from __future__ import annotations

import gzip
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from tests.lab.paths import OUT, TOP, LabError

MAKE_BUNDLE = TOP / "board" / "keel" / "rauc" / "make-bundle.sh"
SLOT = OUT / "dev" / "images"
KEYS = OUT / "keys"
BROKEN_WG = "#!/bin/sh\necho 'wg: broken on purpose by the upgrade lab' >&2\nexit 1\n"
PANIC_INIT = "#!/bin/busybox sh\necho 'keel lab: this initramfs panics on purpose'\nexit 1\n"


@dataclass(frozen=True)
class Bundles:
    disk: Path  # ext4 image holding every bundle below, by name
    old_version: str
    new_version: str


def run(*argv: str | Path, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([str(a) for a in argv], check=True, capture_output=True, **kwargs)


def squash(root: Path, out: Path) -> None:
    # fast, not small: level 1 (the lab's bundles live for one run)
    run("mksquashfs", root, out, "-comp", "zstd", "-Xcompression-level", "1",
        "-noappend", "-quiet", "-no-progress")


def set_version(root: Path, version: str) -> None:
    release = root / "etc" / "keel" / "release"
    lines = [f"version={version}" if x.startswith("version=") else x
             for x in release.read_text().splitlines()]
    release.write_text("\n".join(lines) + "\n")


def slot_dir(where: Path, rootfs: Path, boot: Path, version: str) -> Path:
    where.mkdir(parents=True)
    shutil.copy(rootfs, where / "rootfs.squashfs")
    shutil.copy(boot, where / "boot.vfat")
    (where / "version").write_text(version + "\n")
    return where


def bundle(slot: Path, out: Path, cert: Path = KEYS / "dev.cert.pem",
           key: Path = KEYS / "dev.key.pem") -> None:
    run(MAKE_BUNDLE, slot, cert, key, out)


def panicking_boot(boot: Path, work: Path) -> Path:
    """The slot's kernel partition with an initramfs whose init exits: the
    real kernel panics ("Attempted to kill init"), and panic= reboots it."""
    tree = work / "initrd"
    tree.mkdir()
    data = gzip.decompress(run("mcopy", "-i", boot, "::/keel/initrd.img", "-").stdout)
    run("cpio", "-idm", "--quiet", cwd=tree, input=data)
    (tree / "init").write_text(PANIC_INIT)
    listing = run("find", ".", cwd=tree).stdout
    archive = run("cpio", "-o", "-H", "newc", "--quiet", "--owner", "0:0", cwd=tree,
                  input=listing).stdout
    initrd = work / "initrd.img"
    initrd.write_bytes(gzip.compress(archive, 1))
    broken = work / "boot.vfat"
    shutil.copy(boot, broken)
    run("mcopy", "-o", "-i", broken, initrd, "::/keel/initrd.img")
    return broken


def _good(work: Path) -> tuple[Path, Path, Path, str, str]:
    """The good bundle (a new version) in work/bundles: (the bundles' folder,
    the unpacked root, the good slot's folder, the old and new versions)."""
    for f in ("boot.vfat", "rootfs.squashfs", "version"):
        if not (SLOT / f).is_file():
            raise LabError(f"no {SLOT / f}: run `make dev-image`")
    old = (SLOT / "version").read_text().strip()
    new = f"{old}.next"
    work.mkdir(parents=True, exist_ok=True)
    out = work / "bundles"
    out.mkdir()
    root = work / "root"
    run("unsquashfs", "-q", "-d", root, SLOT / "rootfs.squashfs")
    set_version(root, new)
    squash(root, work / "new.squashfs")
    good = slot_dir(work / "good", work / "new.squashfs", SLOT / "boot.vfat", new)
    bundle(good, out / "good.raucb")
    return out, root, good, old, new


def _untrusted(work: Path, slot: Path, out: Path, name: str = "bad-signature.raucb") -> None:
    """`name`: the slot signed by a key the image does not trust."""
    run("openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
        "-nodes", "-keyout", work / "other.key.pem", "-out", work / "other.cert.pem",
        "-days", "30", "-subj", "/CN=not the image's key")
    bundle(slot, out / name, work / "other.cert.pem", work / "other.key.pem")


def _disk(work: Path, out: Path) -> Path:
    disk = work / "bundles.ext4"
    size_mib = sum(f.stat().st_size for f in out.iterdir()) // (1 << 20) + 64
    run("mke2fs", "-q", "-t", "ext4", "-d", out, disk, f"{size_mib}M")
    return disk


def make(work: Path) -> Bundles:
    out, root, good, old, new = _good(work)

    set_version(root, f"{old}.nowg")
    wg = root / "usr" / "bin" / "wg"
    wg.unlink()
    wg.write_text(BROKEN_WG)
    wg.chmod(0o755)
    squash(root, work / "nowg.squashfs")
    bundle(slot_dir(work / "nowg", work / "nowg.squashfs", SLOT / "boot.vfat", f"{old}.nowg"),
           out / "apply-fails.raucb")

    bundle(slot_dir(work / "panic", work / "new.squashfs",
                    panicking_boot(SLOT / "boot.vfat", work), f"{old}.panic"),
           out / "panics.raucb")

    _untrusted(work, good, out)  # refused: signed by a key the image does not trust
    # refused: for another compatible (properly signed)
    other = work / "other-compat"
    other.mkdir()
    for f in ("rootfs.squashfs", "boot.vfat"):
        (other / f).hardlink_to(good / f)
    (other / "manifest.raucm").write_text(
        f"[update]\ncompatible=other-x86_64\nversion={new}\n\n[bundle]\nformat=verity\n\n"
        "[image.rootfs]\nfilename=rootfs.squashfs\n\n[image.boot]\nfilename=boot.vfat\n")
    run("rauc", "bundle", f"--cert={KEYS / 'dev.cert.pem'}", f"--key={KEYS / 'dev.key.pem'}",
        other, out / "other-compatible.raucb")
    # refused: truncated
    data = (out / "good.raucb").read_bytes()
    (out / "truncated.raucb").write_bytes(data[: len(data) // 2])
    # refused: one byte flipped in the middle of the payload (the signature
    # covers the manifest and the verity root hash, so it still verifies)
    flipped = bytearray(data)
    flipped[len(data) // 2] ^= 0xFF
    (out / "corrupt.raucb").write_bytes(bytes(flipped))

    shutil.rmtree(root)
    return Bundles(_disk(work, out), old, new)
