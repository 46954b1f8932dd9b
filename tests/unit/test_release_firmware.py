"""The release image's linux-firmware holds every file keel's NIC drivers load
(keel.kernel_features: Feature.firmware): the options the defconfig selects,
as Buildroot installs them, plus external.mk's KEEL_LINUX_FIRMWARE_FILES."""

from __future__ import annotations

import os
import re
from fnmatch import fnmatch
from pathlib import Path

import pytest

from keel import kernel_features as kf

TOP = Path(__file__).resolve().parents[2]
EXT = TOP / "buildroot-external"
DEFCONFIG = EXT / "configs/keel_x86_64_defconfig"

# What Buildroot 2026.02.3's package/linux-firmware/linux-firmware.mk installs
# for the options keel selects (copied from it; test_table_is_buildroots
# compares the two where a Buildroot tree is at hand). ice.pkg, which the
# driver asks for, is a link in linux-firmware's WHENCE to the versioned
# package: Buildroot makes the links of the files it installs.
BUILDROOT_FIRMWARE: dict[str, tuple[str, ...]] = {
    "BR2_PACKAGE_LINUX_FIRMWARE_INTEL_ICE": ("intel/ice/ddp/*.pkg",),
    "BR2_PACKAGE_LINUX_FIRMWARE_RTL_815X": tuple(f"rtl_nic/{name}.fw" for name in (
        "rtl8153a-2", "rtl8153a-3", "rtl8153a-4", "rtl8153b-2", "rtl8153c-1", "rtl8156a-2",
        "rtl8156b-2")),
    "BR2_PACKAGE_LINUX_FIRMWARE_RTL_8169": tuple(f"rtl_nic/{name}.fw" for name in (
        "rtl8105e-1", "rtl8106e-1", "rtl8106e-2", "rtl8107e-1", "rtl8107e-2", "rtl8125a-3",
        "rtl8125b-2", "rtl8125d-1", "rtl8168d-1", "rtl8168d-2", "rtl8168e-1", "rtl8168e-2",
        "rtl8168e-3", "rtl8168f-1", "rtl8168f-2", "rtl8168fp-3", "rtl8168g-2", "rtl8168g-3",
        "rtl8168h-1", "rtl8168h-2", "rtl8402-1", "rtl8411-1", "rtl8411-2")),
}


def selected_options() -> set[str]:
    return set(re.findall(r"^(BR2_PACKAGE_LINUX_FIRMWARE_\w+)=y$", DEFCONFIG.read_text(), re.M))


def keel_firmware_files() -> list[str]:
    """external.mk's KEEL_LINUX_FIRMWARE_FILES."""
    m = re.search(r"^KEEL_LINUX_FIRMWARE_FILES = (.*)$", (EXT / "external.mk").read_text(), re.M)
    assert m, "external.mk: no KEEL_LINUX_FIRMWARE_FILES"
    return m.group(1).split()


def test_every_firmware_file_of_the_features_is_installed():
    assert "BR2_PACKAGE_LINUX_FIRMWARE=y" in DEFCONFIG.read_text().splitlines()
    installed = [pattern for option in selected_options()
                 for pattern in BUILDROOT_FIRMWARE.get(option, ())] + keel_firmware_files()
    needed = sorted({name for f in kf.FEATURES for name in f.firmware})
    assert {"intel/ice/ddp/ice.pkg", "rtl_nic/rtl8126a-2.fw", "rtl_nic/rtl8126a-3.fw",
            "rtl_nic/rtl8125b-2.fw", "rtl_nic/rtl8156b-2.fw"} <= set(needed)
    missing = [name for name in needed if not any(fnmatch(name, p) for p in installed)]
    assert missing == [], "no option of the defconfig and nothing in external.mk installs these"


def test_keel_adds_only_what_no_selected_option_installs():
    installed = {p for option in selected_options() for p in BUILDROOT_FIRMWARE.get(option, ())}
    extra = keel_firmware_files()
    assert extra and not set(extra) & installed
    needed = {name for f in kf.FEATURES for name in f.firmware}
    assert set(extra) <= needed, "external.mk adds a file no driver of the list loads"


def test_every_selected_firmware_option_is_in_the_table():
    assert selected_options() == set(BUILDROOT_FIRMWARE)


def buildroot_tree() -> Path | None:
    """BUILDROOT_SRC, or the tree make image downloaded (KEEL_CACHE)."""
    if src := os.environ.get("BUILDROOT_SRC"):
        return Path(src)
    version = re.search(r"^BR_VERSION := (\S+)$", (TOP / "Makefile").read_text(), re.M)
    assert version, "Makefile: no BR_VERSION"
    cache = Path(os.environ.get("KEEL_CACHE", Path.home() / ".cache/keel"))
    tree = cache / f"buildroot-{version.group(1)}"
    return tree if tree.is_dir() else None


def firmware_files_of(makefile_text: str, option: str) -> tuple[str, ...]:
    """The LINUX_FIRMWARE_FILES an option adds in linux-firmware.mk."""
    block = re.search(rf"^ifeq \(\$\({option}\),y\)\n(.*?)^endif", makefile_text, re.M | re.S)
    assert block, f"linux-firmware.mk has no block for {option}"
    files: list[str] = []
    for m in re.finditer(r"LINUX_FIRMWARE_FILES\s*\+=\s*((?:.*\\\n)*.*)", block.group(1)):
        files += m.group(1).replace("\\\n", " ").split()
    return tuple(files)


def test_table_is_buildroots():
    tree = buildroot_tree()
    if tree is None:
        pytest.skip("no Buildroot tree (BUILDROOT_SRC, or make image's download): "
                    "the table was copied from 2026.02.3")
    text = (tree / "package/linux-firmware/linux-firmware.mk").read_text()
    for option, files in BUILDROOT_FIRMWARE.items():
        assert firmware_files_of(text, option) == files, option
