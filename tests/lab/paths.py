"""Where the lab finds the built image, firmware, and where it keeps its runs."""

from __future__ import annotations

import os
from pathlib import Path

TOP = Path(__file__).resolve().parents[2]
OUT = Path(os.environ.get("KEEL_OUT", TOP / "out")).resolve()
DEV_IMAGE = OUT / "images" / "keel-x86_64-dev.qcow2"
DEV_KERNEL = OUT / "dev" / "images" / "bzImage"
RUNS = OUT / "lab-runs"
CMDLINE_FILE = TOP / "board" / "keel" / "x86_64" / "cmdline.txt"

OVMF_CANDIDATES = (
    Path("/usr/share/ovmf/OVMF.fd"),
    Path("/usr/share/OVMF/OVMF.fd"),
    Path("/usr/share/qemu/OVMF.fd"),
)


class LabError(RuntimeError):
    """The lab cannot do what a test asked (missing image, guest died, timeout)."""


class EmulatorCrash(LabError):
    """QEMU itself failed an internal assertion (not the guest's doing)."""


def dev_image() -> Path:
    if not DEV_IMAGE.is_file():
        raise LabError(f"no dev image at {DEV_IMAGE}: run `make dev-image` first")
    return DEV_IMAGE


def ovmf() -> Path:
    for path in OVMF_CANDIDATES:
        if path.is_file():
            return path
    raise LabError("no OVMF firmware found (Debian package 'ovmf'): UEFI boot cannot be tested")
