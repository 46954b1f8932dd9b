"""One disk (overlay/usr/share/keel/boot-disk.sh, sourced by S01mount and
the dev image's initramfs): with two keel disks in the machine, the
partition names S03data, S47upgrade and RAUC use are the booted root's
disk's, the other disk is said once and ignored, and a partition's
PARTUUID (the dev image's root=PARTUUID=) is read from its disk's GPT as
the kernel and GRUB read it. On made-up /sys trees and GPT images in a
temporary directory: no privileges."""

from __future__ import annotations

import struct
import subprocess
import uuid
from pathlib import Path

LIB = Path(__file__).resolve().parents[2] / "overlay/usr/share/keel/boot-disk.sh"
PARTS = ("bios-boot", "esp", "keel-boot-a", "keel-root-a", "keel-boot-b", "keel-root-b",
         "keel-data")


def sh(script: str, *args: str) -> str:
    return subprocess.run(["sh", "-c", f". {LIB}; {script}", "sh", *args], check=True,
                          capture_output=True, text=True, timeout=30).stdout


def disk(sys: Path, name: str, major: int, pci: str, partnames: tuple[str, ...],
         sep: str = "") -> None:
    """A disk and its partitions as sysfs lays them out: the device
    directories, /sys/class/block and /sys/dev/block links, uevents."""
    base = sys / f"devices/pci0000:00/{pci}/block/{name}"
    base.mkdir(parents=True)
    (sys / "class/block").mkdir(parents=True, exist_ok=True)
    (sys / "dev/block").mkdir(parents=True, exist_ok=True)
    (sys / "block").mkdir(exist_ok=True)
    (base / "uevent").write_text(f"MAJOR={major}\nMINOR=0\nDEVNAME={name}\nDEVTYPE=disk\n")
    (sys / "class/block" / name).symlink_to(base)
    (sys / "block" / name).symlink_to(base)
    (sys / f"dev/block/{major}:0").symlink_to(base)
    for n, label in enumerate(partnames, 1):
        part = base / f"{name}{sep}{n}"
        part.mkdir()
        (part / "partition").write_text(f"{n}\n")
        (part / "uevent").write_text(f"MAJOR={major}\nMINOR={n}\nDEVNAME={part.name}\n"
                                     f"DEVTYPE=partition\nPARTN={n}\nPARTNAME={label}\n")
        (sys / "class/block" / part.name).symlink_to(part)
        (sys / f"dev/block/{major}:{n}").symlink_to(part)


def two_keel_disks(tmp_path: Path) -> Path:
    sys = tmp_path / "sys"
    disk(sys, "nvme0n1", 259, "0000:01:00.0", PARTS, sep="p")
    disk(sys, "sda", 8, "0000:00:14.0", PARTS)
    return sys


def mountinfo(tmp_path: Path, majmin: str) -> Path:
    path = tmp_path / "mountinfo"
    path.write_text("1 0 0:2 / / rw - rootfs rootfs rw\n"
                    f"22 1 {majmin} / / ro,relatime - squashfs /dev/root ro\n"
                    "23 22 0:21 / /proc rw - proc proc rw\n")
    return path


def test_the_root_disk_is_the_booted_roots(tmp_path):
    sys = two_keel_disks(tmp_path)
    assert sh('keel_root_disk "$1" "$2"', str(sys), str(mountinfo(tmp_path, "8:4"))) == "sda\n"
    assert sh('keel_root_disk "$1" "$2"', str(sys),
              str(mountinfo(tmp_path, "259:6"))) == "nvme0n1\n"
    # root on no partition (a tmpfs): none
    assert sh('keel_root_disk "$1" "$2"', str(sys), str(mountinfo(tmp_path, "0:30"))) == ""


def test_partition_names_come_from_the_boot_disk_only(tmp_path):
    sys = two_keel_disks(tmp_path)
    links = tmp_path / "by-partlabel"
    out = sh('keel_partlabels "$1" "$2" sda', str(sys), str(links))
    assert {p.name: str(p.readlink()) for p in links.iterdir()} == {
        label: f"../../sda{n}" for n, label in enumerate(PARTS, 1)}
    assert out == ("keel: another keel disk, nvme0n1 ( esp keel-boot-a keel-root-a keel-boot-b "
                   "keel-root-b keel-data ), ignored: root, /data and the slots are on sda, "
                   "the disk booted\n")
    links2 = tmp_path / "by-partlabel2"
    out = sh('keel_partlabels "$1" "$2" nvme0n1', str(sys), str(links2))
    assert (links2 / "keel-data").readlink() == Path("../../nvme0n1p7")
    assert "another keel disk, sda (" in out


def test_one_keel_disk_says_nothing_and_an_unknown_disk_links_all(tmp_path):
    sys = tmp_path / "sys"
    disk(sys, "vda", 254, "0000:00:04.0", PARTS)
    disk(sys, "vdb", 253, "0000:00:05.0", ("scratch",))
    links = tmp_path / "links"
    assert sh('keel_partlabels "$1" "$2" vda', str(sys), str(links)) == ""
    assert "scratch" not in {p.name for p in links.iterdir()}
    every = tmp_path / "every"
    assert sh('keel_partlabels "$1" "$2" ""', str(sys), str(every)) == ""
    assert {p.name for p in every.iterdir()} == {*PARTS, "scratch"}


def gpt_image(path: Path, guids: list[uuid.UUID], sector: int = 512) -> None:
    """A disk image with a GPT header at LBA 1 and its entries at LBA 2,
    each entry's unique GUID as GPT stores it (mixed-endian: bytes_le)."""
    entries = bytearray(128 * 128)
    for i, guid in enumerate(guids):
        entries[i * 128 + 16:i * 128 + 32] = guid.bytes_le
    header = bytearray(sector)
    header[0:8] = b"EFI PART"
    header[72:80] = struct.pack("<Q", 2)
    header[80:84] = struct.pack("<I", 128)
    header[84:88] = struct.pack("<I", 128)
    path.write_bytes(bytes(sector) + bytes(header) + bytes(entries) + bytes(sector * 4))


def test_a_partuuid_is_read_from_the_disks_gpt(tmp_path):
    sys = two_keel_disks(tmp_path)
    dev = tmp_path / "dev"
    dev.mkdir()
    sda = [uuid.uuid4() for _ in PARTS]
    nvme = [uuid.uuid4() for _ in PARTS]
    gpt_image(dev / "sda", sda)
    gpt_image(dev / "nvme0n1", nvme, sector=4096)
    (sys / "devices/pci0000:00/0000:01:00.0/block/nvme0n1/queue").mkdir()
    (sys / "devices/pci0000:00/0000:01:00.0/block/nvme0n1/queue/logical_block_size") \
        .write_text("4096\n")
    assert sh('keel_gpt_partuuid "$1" "$2" sda4', str(sys), str(dev)) == f"{sda[3]}\n"
    assert sh('keel_gpt_partuuid "$1" "$2" nvme0n1p7', str(sys), str(dev)) == f"{nvme[6]}\n"
    # a disk with no GPT, a name that is no partition: nothing
    (dev / "sda").write_bytes(bytes(8192))
    assert sh('keel_gpt_partuuid "$1" "$2" sda4', str(sys), str(dev)) == ""
    assert sh('keel_gpt_partuuid "$1" "$2" sda', str(sys), str(dev)) == ""
