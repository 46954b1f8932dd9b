"""The one disk image boots by BIOS (SeaBIOS, from AHCI) and by UEFI (OVMF,
from NVMe) to a login on ttyS0, with the board's kernel command line; tty1
runs the console UI, drawn on the machine's screen, and falls back to a
login when the UI keeps failing."""

from __future__ import annotations

import re

import pytest

from tests.lab import screen_text
from tests.lab.paths import CMDLINE_FILE

pytestmark = pytest.mark.lab("image")


@pytest.mark.parametrize("firmware", ["bios", "uefi"])
def test_boot_reaches_login_on_ttyS0(shared_lab, firmware):
    guest = shared_lab.by_firmware(firmware)
    assert guest.check("tty") == "/dev/ttyS0"
    cmdline = [arg for arg in guest.check("cat /proc/cmdline").split()
               if not arg.startswith("BOOT_IMAGE=")]  # GRUB adds the kernel's path
    # GRUB's slot choice (grub.cfg.in), then the board's line: the image as
    # flashed boots slot A
    # the root by the PARTUUID GRUB read off the disk it booted (one disk:
    # grub.cfg.in), and S01mount's names from that disk
    assert cmdline[0].startswith("root=PARTUUID=")
    assert cmdline[1:] == ["rauc.slot=A", *CMDLINE_FILE.read_text().split()]
    assert guest.check("cat /run/keel/boot-disk").startswith("disk=")
    efi = guest.run("test -d /sys/firmware/efi").rc == 0
    assert efi == (firmware == "uefi")
    # init is BusyBox, and the keel command is installed
    assert "busybox" in guest.check("readlink -f /proc/1/exe")
    assert guest.check("keel --version").startswith("keel ")


# the first boot's question on tty1, as tesseract reads it off the screen
FIRST_BOOT = r"first boot: set root"


@pytest.mark.parametrize("firmware", ["uefi", "bios"])
def test_the_console_ui_is_drawn_on_the_screen(shared_lab, firmware):
    """The screen QEMU shows (its screendump), read back as text: the UI's
    first-boot dialog is there. UEFI's guest has a virtio-vga, whose KMS
    driver takes the screen from the firmware's framebuffer (the console
    must survive that); BIOS's the standard VGA."""
    guest = shared_lab.by_firmware(firmware)
    screen_text.wait_for(guest, FIRST_BOOT, 180)
    # the dashboard behind the dialog, once its first poll is drawn (a loaded
    # guest showed "reading wg" there first), in a line tesseract reads
    # whole (it misread the bold top line once: "NOW what limits later")
    text = screen_text.wait_for(guest, r"no WireGuard interface", 120)
    assert re.search(FIRST_BOOT, text, re.I), text  # the dialog still up
    if firmware == "uefi":
        # seen: the UI off on its tty1 from here, as on the lab's other guests
        # (its once-a-second refresh is emulated CPU no test after reads); the
        # BIOS guest's stays, for the test below
        guest.check("touch /run/keel/tty1-off; pkill -f 'keel tui --console'; true")


def test_tty1_runs_the_ui_and_falls_back_to_a_login_after_3_failed_starts(shared_lab):
    guest = shared_lab.bios  # the UI left on tty1, as shipped
    pid = guest.until("pgrep -f 'keel tui --console'", 120).split()[0]
    assert guest.check(f"readlink /proc/{pid}/fd/0") == "/dev/tty1"
    assert guest.check(f"tr '\\0' ' ' < /proc/{pid}/environ | grep -o 'TERM=linux'")
    # the UI ends with an error within 30 s of its start, three times: a login.
    # Each start is killed as soon as it is seen, in one command in the guest
    # (a kill from here a round trip later came past 30 s on a loaded host,
    # which rightly started the count again)
    for _ in range(6):
        if guest.run("pgrep -f 'getty 38400 tty1'").rc == 0:
            break
        guest.check("until pgrep -f 'keel tui --console' >/dev/null || "
                    "pgrep -f 'getty 38400 tty1' >/dev/null; do sleep 0.2; done; "
                    "pkill -f 'keel tui --console'; sleep 1; true", 180)
    guest.until("pgrep -f 'getty 38400 tty1'", 60)
    assert guest.run("pgrep -f 'keel tui --console'").rc != 0
    assert int(guest.check("cat /run/keel/tty1-failures")) >= 3


@pytest.mark.parametrize("firmware", ["bios", "uefi"])
def test_the_firewall_is_closed_before_any_interface_and_forwarding_waits_for_keel(
        shared_lab, firmware):
    """From the boot's own timeline (one clock, seconds since the kernel
    started): the default-deny ruleset was in before the NICs' drivers were
    loaded, and forwarding came on only after keel's ruleset replaced it."""
    guest = shared_lab.by_firmware(firmware)
    report = guest.json("keel doctor --boot --json")
    steps = {s["step"]: s for s in report["steps"]}
    load = next(s for name, s in steps.items() if name.startswith("apply firewall: load"))
    forwarding = next(s for name, s in steps.items()
                      if name.startswith("apply firewall: forwarding on"))
    # read from the kernel right after the boot ruleset's load, before any NIC
    assert guest.check("cat /run/keel/boot-firewall") == "in, forwarding 0"
    assert steps["S02firewall"]["end"] <= steps["S05modules"]["start"]
    assert steps["S02firewall"]["end"] <= steps["S10network"]["start"]
    first_up = min(s["start"] for name, s in steps.items() if name.startswith("apply interfaces"))
    assert steps["S02firewall"]["end"] <= first_up
    assert load["end"] <= forwarding["start"]
    assert report["milestones"]["routing"] is not None
    # keel apply --boot was started early (S01preload) and acted on S40keel's word
    ready = steps["keel apply --boot: ready, until S40keel"]
    assert steps["S01preload"]["start"] <= ready["start"]
    assert ready["end"] >= steps["S40keel"]["start"]
    assert ready["end"] <= load["start"]
    assert "keel: applied" in guest.check("cat /run/keel/boot-apply.log")
    # now: keel's ruleset, forwarding on, and nothing but keel's table
    assert guest.check("sysctl -n net.ipv4.ip_forward") == "1"
    assert guest.check("nft list tables") == "table inet keel"


def test_root_stays_locked_without_data(shared_lab):
    """S04access itself, run in a private mount namespace where /data is not
    mounted and the shadow not bound: root locked (not empty), and why."""
    guest = shared_lab.bios
    out = guest.check("unshare -m sh -c 'umount /etc/shadow 2>/dev/null; umount -l /data; "
                      "/etc/init.d/S04access start; grep ^root: /etc/shadow | cut -d: -f2'; "
                      "cat /run/keel/access-locked; rm -f /run/keel/access-locked")
    lines = out.splitlines()
    assert "access: root is locked: /data is not mounted" in lines[0]
    assert lines[1] == "*"
    assert "/data is not mounted" in lines[2]
    # the system outside the namespace is as it was: /data mounted
    assert guest.run("mountpoint -q /data").rc == 0
