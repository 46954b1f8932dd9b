"""The built dev image has the disk layout of board/keel/x86_64/genimage.cfg,
with GRUB's BIOS boot code pointed at its core image."""

from __future__ import annotations

import struct
import subprocess

import pytest

from tests.lab.gpt import SECTOR, read_gpt
from tests.lab.paths import CMDLINE_FILE, OUT

IMAGE = OUT / "images" / "keel-x86_64-dev.img"
BIOS_BOOT = "21686148-6449-6e6f-744e-656564454649"
ESP = "c12a7328-f81f-11d2-ba4b-00a0c93ec93b"
LINUX = "0fc63daf-8483-4772-8e79-3d69d8477de4"


@pytest.fixture(scope="module")
def parts():
    assert IMAGE.is_file(), f"no dev image at {IMAGE}: run `make dev-image`"
    return {p.name: p for p in read_gpt(IMAGE)}


def test_partitions_in_order_with_their_types(parts):
    assert [(p.number, name, p.type_guid) for name, p in parts.items()] == [
        (1, "bios-boot", BIOS_BOOT),
        (2, "esp", ESP),
        (3, "keel-root", LINUX),
        (4, "keel-data", LINUX),
    ]
    assert parts["bios-boot"].size == 1 << 20
    assert parts["keel-root"].size == 512 << 20


def test_bios_boot_code_points_at_the_core_image(parts):
    data = IMAGE.read_bytes()[: 2 * SECTOR]
    assert data[510:512] == b"\x55\xaa"
    core = parts["bios-boot"].first_lba
    (kernel_sector,) = struct.unpack_from("<Q", data, 0x5C)
    assert kernel_sector == core
    with open(IMAGE, "rb") as disk:
        disk.seek(core * SECTOR)
        diskboot = disk.read(SECTOR)
    (blocklist_start,) = struct.unpack_from("<Q", diskboot, 0x1F4)
    assert blocklist_start == core + 1


def test_esp_holds_both_grubs_kernel_and_the_board_cmdline(parts):
    offset = parts["esp"].first_lba * SECTOR
    image = f"{IMAGE}@@{offset}"
    listing = subprocess.run(["mdir", "-i", image, "-/", "-b", "::"], check=True,
                             capture_output=True, text=True).stdout.split()
    for path in ("::/EFI/BOOT/BOOTX64.EFI", "::/EFI/BOOT/GRUB.CFG", "::/EFI/KEEL/BZIMAGE"):
        assert path.lower() in [p.lower() for p in listing], listing
    grub_cfg = subprocess.run(["mtype", "-i", image, "::/EFI/BOOT/grub.cfg"], check=True,
                              capture_output=True, text=True).stdout
    cmdline = CMDLINE_FILE.read_text().strip()
    assert f"linux /EFI/keel/bzImage {cmdline}" in grub_cfg
    assert "console=ttyS0,115200" in cmdline and "console=tty0" in cmdline
