"""The one disk image boots by BIOS (SeaBIOS) and by UEFI (OVMF) to a login on
ttyS0, with the board's kernel command line."""

from __future__ import annotations

import pytest

from tests.lab.paths import CMDLINE_FILE


@pytest.mark.parametrize("firmware", ["bios", "uefi"])
def test_boot_reaches_login_on_ttyS0(make_lab, firmware):
    lab = make_lab()
    guest = lab.guest("keel", firmware=firmware)
    lab.start()

    assert guest.check("tty") == "/dev/ttyS0"
    cmdline = [arg for arg in guest.check("cat /proc/cmdline").split()
               if not arg.startswith("BOOT_IMAGE=")]  # GRUB adds the kernel's path
    assert cmdline == CMDLINE_FILE.read_text().split()
    efi = guest.run("test -d /sys/firmware/efi").rc == 0
    assert efi == (firmware == "uefi")
    # init is BusyBox, and the keel command is installed
    assert "busybox" in guest.check("readlink -f /proc/1/exe")
    assert guest.check("keel --version").startswith("keel ")
