"""The dev image boots wherever the release image does: its initramfs loads a
driver for every disk keel.kernel_features builds into the release kernel,
and its build keeps the NIC and keyboard drivers (checked against the list
here, and against Debian's kernel by build.sh itself)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from keel import kernel_features as kf

TOP = Path(__file__).resolve().parents[2]
DEV = TOP / "board/keel/dev-image"
BUILD_SH = DEV / "build.sh"
CHECK = TOP / "buildroot-external/scripts/check-kernel-config"

# storage modules the initramfs loads as another's dependency (modprobe
# --show-depends brings them: scsi_mod under sd_mod, libata under ahci, ...)
DEPENDENCIES = {"scsi_mod", "libata", "mmc_core", "sdhci", "usbcore", "xhci_hcd", "ehci_hcd"}


def initramfs_lines() -> list[list[str]]:
    return [line.split() for line in (DEV / "initramfs-modules.txt").read_text().splitlines()
            if line.strip() and not line.startswith("#")]


def test_initramfs_loads_every_storage_driver_of_the_release_kernel():
    listed = {mod for line in initramfs_lines() for mod in line}
    storage = {f.module for f in kf.FEATURES if f.area == kf.STORAGE and f.module}
    assert storage - listed - DEPENDENCIES == set()
    assert storage >= DEPENDENCIES, "a dependency named here that is not a storage feature"
    assert {"ata_piix", "usb_storage", "uas", "xhci_pci", "ehci_pci", "nvme", "vmd", "ahci",
            "sd_mod", "virtio_scsi", "vmw_pvscsi", "mptspi", "hv_storvsc", "xen_blkfront",
            "sdhci_pci", "mmc_block"} <= listed


def test_initramfs_tries_the_labs_disk_first():
    """Lines load in order until the root shows up: the lab's virtio disk (and
    squashfs, to mount it) come before any controller it would probe in vain."""
    lines = initramfs_lines()
    assert lines[0] == ["squashfs"]
    assert lines[1] == ["virtio_blk"]


def pruned_directories() -> list[str]:
    m = re.search(r"^for d in (.*?); do\n\trm -rf \"\$ROOT/usr/lib/modules/\$KVER/kernel/\$d\"",
                  BUILD_SH.read_text(), re.M | re.S)
    assert m, "build.sh: no loop that prunes kernel module directories"
    return m.group(1).replace("\\\n", " ").split()


def test_build_keeps_the_nic_storage_and_keyboard_drivers():
    pruned = pruned_directories()
    assert "drivers/gpu" in pruned and "sound" in pruned
    kept = ("drivers/hid", "drivers/net", "drivers/net/ethernet", "drivers/net/usb",
            "drivers/net/hyperv", "drivers/hv", "drivers/scsi", "drivers/ata", "drivers/mmc",
            "drivers/usb", "drivers/input", "drivers/input/serio", "drivers/block")
    for directory in kept:
        assert not any(directory == d or directory.startswith(d + "/") for d in pruned), \
            f"build.sh prunes {directory}"


def test_build_checks_the_kernel_has_every_listed_module():
    """build.sh asks Debian's kernel for every module of the list (but those it
    drops on purpose), so a name the list gets wrong stops the build."""
    text = BUILD_SH.read_text()
    assert "check-kernel-config\" --modules" in text
    on_purpose = re.search(r'^LACKS_ON_PURPOSE=" (.*) "$', text, re.M)
    assert on_purpose
    assert set(on_purpose.group(1).split()) <= set(kf.modules())
    out = subprocess.run([str(CHECK), "--modules"], capture_output=True, text=True, check=True)
    assert out.stdout.split() == list(kf.modules())
    assert {"hid_generic", "usbhid", "hyperv_keyboard", "ena", "gve", "hv_netvsc", "ice",
            "r8152", "cdc_ncm"} <= set(out.stdout.split())
