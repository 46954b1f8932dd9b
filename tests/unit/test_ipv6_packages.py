"""The programs keel's IPv6 plumbing runs are in both images: dhcpcd
(keel.render.dhcpcd) from Debian's dhcpcd-base and Buildroot's dhcpcd, whose
own init script (it would start dhcpcd on every interface with its default
config, DHCPv4 too) is taken out as dnsmasq's is."""

from __future__ import annotations

import re
from pathlib import Path

TOP = Path(__file__).resolve().parents[2]
PACKAGES = TOP / "board/keel/dev-image/packages.txt"
DEFCONFIG = TOP / "buildroot-external/configs/keel_x86_64_defconfig"
EXTERNAL_MK = TOP / "buildroot-external/external.mk"


def test_dhcpcd_and_dnsmasq_are_in_the_dev_image():
    names = {line.strip() for line in PACKAGES.read_text().splitlines()
             if line.strip() and not line.startswith("#")}
    assert {"dhcpcd-base", "dnsmasq-base"} <= names


def test_dhcpcd_and_dnsmasq_are_in_the_release_image_without_their_init_scripts():
    lines = DEFCONFIG.read_text().splitlines()
    assert "BR2_PACKAGE_DHCPCD=y" in lines and "BR2_PACKAGE_DNSMASQ=y" in lines
    scripts = re.search(r"^KEEL_PACKAGE_INIT_SCRIPTS = (.*)$", EXTERNAL_MK.read_text(), re.M)
    assert scripts is not None
    assert {"S41dhcpcd", "S80dnsmasq"} <= set(scripts.group(1).split())
