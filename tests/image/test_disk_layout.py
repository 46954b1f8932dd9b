"""The built dev image has the disk layout of board/keel/x86_64/genimage.cfg,
with GRUB's BIOS boot code pointed at its core image."""

from __future__ import annotations

import struct
import subprocess

import pytest

from keel.upgrade import grubenv
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
        (3, "keel-boot-a", LINUX),
        (4, "keel-root-a", LINUX),
        (5, "keel-boot-b", LINUX),
        (6, "keel-root-b", LINUX),
        (7, "keel-data", LINUX),
    ]
    assert parts["bios-boot"].size == 1 << 20
    for slot in "ab":
        assert parts[f"keel-boot-{slot}"].size == 32 << 20
        assert parts[f"keel-root-{slot}"].size == 512 << 20


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


def listing(parts, name: str) -> list[str]:
    image = f"{IMAGE}@@{parts[name].first_lba * SECTOR}"
    out = subprocess.run(["mdir", "-i", image, "-/", "-b", "::"], check=True,
                         capture_output=True, text=True).stdout.split()
    return [p.lower() for p in out]


def test_esp_holds_both_grubs_the_board_cmdline_and_grubenv(parts):
    assert {"::/efi/boot/bootx64.efi", "::/efi/boot/grub.cfg",
            "::/efi/boot/grubenv"} <= set(listing(parts, "esp"))
    image = f"{IMAGE}@@{parts['esp'].first_lba * SECTOR}"
    grub_cfg = subprocess.run(["mtype", "-i", image, "::/EFI/BOOT/grub.cfg"], check=True,
                              capture_output=True, text=True).stdout
    cmdline = CMDLINE_FILE.read_text().strip()
    assert ("linux $keel_boot/keel/bzImage $keel_root_arg "
            f"rauc.slot=$keel_slot$keel_spent {cmdline}") in grub_cfg
    # the root by the PARTUUID of the root partition of the disk booted
    assert f'keel_root_part="($keel_disk,gpt{parts["keel-root-a"].number})"' in grub_cfg
    assert f'keel_root_part="($keel_disk,gpt{parts["keel-root-b"].number})"' in grub_cfg
    assert 'keel_root_arg="root=PARTUUID=$keel_root_uuid"' in grub_cfg
    # the slots' kernel partitions by their numbers in the table
    assert f'keel_boot="($keel_disk,gpt{parts["keel-boot-a"].number})"' in grub_cfg
    assert f'keel_boot="($keel_disk,gpt{parts["keel-boot-b"].number})"' in grub_cfg
    assert "console=ttyS0,115200" in cmdline and "console=tty0" in cmdline
    env = subprocess.run(["mtype", "-i", image, "::/EFI/BOOT/grubenv"], check=True,
                         capture_output=True).stdout
    boot = grubenv.parse(env)
    assert boot.order == ("A", "B") and boot.next_boot() == "A"
    assert boot.slots["A"].good and not boot.slots["B"].ok


def test_slot_a_holds_the_kernel_and_slot_b_is_empty(parts):
    assert "::/keel/bzimage" in listing(parts, "keel-boot-a")
    with open(IMAGE, "rb") as disk:
        disk.seek(parts["keel-boot-b"].first_lba * SECTOR)
        assert disk.read(1 << 16) == bytes(1 << 16)
