"""/data: on a disk larger than the image it grows to fill it on first boot,
it survives a reboot, and the root filesystem is read-only."""

from __future__ import annotations

import secrets

import pytest

from tests.lab import labs

pytestmark = pytest.mark.lab("image")


@pytest.fixture(scope="module")
def guest(shared_lab):
    return shared_lab.uefi  # on a disk of labs.DATA_DISK_MIB


def test_data_grew_to_fill_the_disk(guest):
    source = guest.check("findmnt -n -o SOURCE /data")
    assert guest.check(f"blkid -s LABEL -o value {source}") == "KEEL_DATA"
    size_mib = int(guest.check("df -m /data | awk 'NR == 2 { print $2 }'"))
    # the image's data partition is 32 MiB, the last: it now reaches the end
    # of the disk (what comes before it, ESP and slots, is the image's layout;
    # ext4's own overhead is a few per cent)
    disk_mib = labs.DATA_DISK_MIB
    part = source.removeprefix("/dev/")
    start_mib = int(guest.check(f"cat /sys/class/block/{part}/start")) * 512 >> 20
    assert size_mib > (disk_mib - start_mib) * 0.9, (
        f"/data is {size_mib} MiB on a {disk_mib} MiB disk, its partition starts at "
        f"{start_mib} MiB")
    disk = guest.check(f"lsblk -n -o PKNAME {source}")
    assert "backup GPT" not in guest.check(f"sfdisk --verify /dev/{disk} 2>&1; true")


def test_root_is_read_only(guest):
    options = guest.check("findmnt -n -o OPTIONS /").split(",")
    assert "ro" in options
    assert guest.check("findmnt -n -o FSTYPE /") == "squashfs"
    assert guest.run("touch /keel-write-test").rc != 0


def test_data_survives_a_reboot(guest):
    token = secrets.token_hex(8)
    guest.check(f"echo {token} > /data/keel/reboot-test && sync")
    guest.reboot()
    assert guest.check("cat /data/keel/reboot-test") == token
    assert "ro" in guest.check("findmnt -n -o OPTIONS /").split(",")
