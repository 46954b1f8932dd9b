"""The one list of kernel features: the fragment against it, the final
.config against the fragment, and what keel doctor reads on a running kernel."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from keel import kernel_features as kf

TOP = Path(__file__).resolve().parents[2]
FRAGMENT = TOP / "board/keel/x86_64/linux.fragment"
CHECK = TOP / "buildroot-external/scripts/check-kernel-config"


def test_fragment_sets_exactly_the_list():
    assert kf.check_fragment(FRAGMENT.read_text()) == []


def test_fragment_is_the_text_the_list_renders(tmp_path):
    """Its comments (reasons, machines) come from the list too; the check says
    how to render it again when they drift."""
    assert FRAGMENT.read_text() == kf.render_fragment()
    drifted = tmp_path / "linux.fragment"
    drifted.write_text(FRAGMENT.read_text().replace("# the WireGuard tunnel", "# wg"))
    proc = subprocess.run([str(CHECK), "--fragment", str(drifted)], capture_output=True,
                          text=True)
    assert proc.returncode == 1
    assert "check-kernel-config --render > board/keel/x86_64/linux.fragment" in proc.stderr
    rendered = subprocess.run([str(CHECK), "--render"], capture_output=True, text=True,
                              check=True)
    assert rendered.stdout == FRAGMENT.read_text()


def test_list_has_no_duplicates_and_every_feature_a_reason():
    symbols = [f.symbol for f in kf.FEATURES]
    assert len(symbols) == len(set(symbols))
    assert all(f.why and f.machines for f in kf.FEATURES)


def test_built_in_unless_firmware_is_loaded_at_probe():
    """Everything is built in (no initramfs), but for a NIC driver that loads
    firmware when it probes: built in, it would probe before the root
    filesystem holds /lib/firmware; S05modules loads it (PCI class 02)."""
    modules = [f for f in kf.FEATURES if f.value != "y"]
    assert [f.symbol for f in modules] == ["ICE"]
    assert all(f.value == "m" and f.area == kf.NIC and f.module and f.firmware
               for f in modules)


def test_every_driver_names_the_machines_that_need_it():
    drivers = [f for f in kf.FEATURES if f.area in kf.HARDWARE_AREAS and f.module]
    assert len(drivers) > 50
    vague = [f.symbol for f in drivers if f.machines == kf.EVERY]
    assert vague == []
    fragment = FRAGMENT.read_text()
    assert f"# Amazon Elastic Network Adapter [{kf.AWS}]\nCONFIG_ENA_ETHERNET=y" in fragment


def test_doctor_features_have_a_module():
    """keel doctor also runs on the dev image's Debian kernel, which has no
    /proc/config.gz: a feature it checks must be findable by its module."""
    assert all(f.module for f in kf.FEATURES if f.doctor)


@pytest.mark.parametrize("symbol", [
    # the reference list of what the router needs
    "NET_SCH_CAKE", "NET_SCH_FQ_CODEL", "DEFAULT_FQ_CODEL", "NET_SCH_INGRESS", "NET_CLS_ACT",
    "NET_CLS_MATCHALL", "NET_CLS_U32", "NET_ACT_MIRRED", "IFB", "WIREGUARD",
    "IP_ADVANCED_ROUTER", "IP_MULTIPLE_TABLES", "IPV6_MULTIPLE_TABLES", "NETFILTER_ADVANCED",
    "NF_CONNTRACK", "NF_NAT", "NF_TABLES_INET", "NF_TABLES_IPV4", "NF_TABLES_IPV6",
    "NF_TABLES_NETDEV", "NFT_CT", "NFT_NAT", "NFT_MASQ", "NFT_REJECT", "NFT_LOG", "NFT_LIMIT",
    "NFT_FIB_INET", "NF_FLOW_TABLE_INET", "NFT_FLOW_OFFLOAD", "VIRTIO_PCI", "VIRTIO_NET",
    "VIRTIO_BLK", "SCSI_VIRTIO", "VIRTIO_CONSOLE", "HW_RANDOM_VIRTIO", "SERIAL_8250_CONSOLE",
    "EFI", "EFI_STUB", "EFI_PARTITION", "VFAT_FS", "EXT4_FS", "SQUASHFS", "SQUASHFS_ZSTD",
    "OVERLAY_FS", "IKCONFIG_PROC", "DEVTMPFS", "DEVTMPFS_MOUNT", "IGC", "IGB", "E1000E",
    "R8169", "CPU_FREQ_GOV_PERFORMANCE", "CPU_FREQ_DEFAULT_GOV_PERFORMANCE",
    "X86_INTEL_PSTATE", "X86_AMD_PSTATE", "X86_ACPI_CPUFREQ", "CPU_IDLE", "CPU_IDLE_GOV_MENU",
    "INTEL_IDLE", "ACPI_PROCESSOR", "KVM_GUEST", "HALTPOLL_CPUIDLE",
    # upgrades: what RAUC's integration guide asks of the kernel for verity bundles
    # (and streaming), and the ESP RAUC writes grubenv on
    "BLK_DEV_LOOP", "MD", "BLK_DEV_DM", "DM_VERITY", "CRYPTO_SHA256", "BLK_DEV_NBD",
    "NLS_CODEPAGE_437", "NLS_ISO8859_1",
    # the hosts keel is flashed onto (docs/hardware.md)
    "DRM_FBDEV_EMULATION", "DRM_SIMPLEDRM", "SYSFB_SIMPLEFB", "FRAMEBUFFER_CONSOLE",
    "USB_HID", "HID_GENERIC", "HYPERV_KEYBOARD",
    "BLK_DEV_NVME", "VMD", "SATA_AHCI", "ATA_PIIX", "BLK_DEV_SD", "VMWARE_PVSCSI",
    "FUSION_SPI", "FUSION_SAS", "MEGARAID_SAS", "HYPERV_STORAGE", "XEN_BLKDEV_FRONTEND",
    "MMC_BLOCK", "MMC_SDHCI_PCI", "MMC_SDHCI_ACPI", "USB_STORAGE", "USB_UAS",
    "USB_XHCI_HCD", "USB_XHCI_PCI", "USB_EHCI_HCD", "USB_EHCI_PCI",
    "ENA_ETHERNET", "GVE", "HYPERV", "HYPERV_NET", "XEN_NETDEV_FRONTEND", "VMXNET3",
    "IXGBE", "IXGBEVF", "I40E", "I40EVF", "MLX4_EN", "MLX5_CORE", "MLX5_CORE_EN", "AQTION",
    "USB_RTL8152", "USB_NET_AX88179_178A", "USB_NET_CDCETHER", "USB_NET_CDC_NCM",
])
def test_reference_feature_listed_and_built_in(symbol):
    assert kf.BY_SYMBOL[symbol].value == "y"
    assert kf.parse_kconfig(FRAGMENT.read_text())[symbol] == "y"


def test_doctor_checks_the_modules_it_checked_before():
    before = {"wireguard", "sch_cake", "ifb", "act_mirred", "cls_matchall", "nf_tables",
              "nft_nat", "nft_masq", "nft_ct", "sch_fq_codel"}
    assert before <= set(kf.doctor_modules())


def test_upgrade_modules_are_listed():
    """keel upgrade loads these before an install (the dev image's Debian kernel has
    them as modules): each is a listed feature, built into the release kernel."""
    from keel.upgrade.system import MODULES

    listed = {f.module for f in kf.FEATURES if f.module}
    assert set(MODULES) <= listed


def test_parse_kconfig():
    text = ('CONFIG_A=y\nCONFIG_B=m\n# CONFIG_C is not set\nCONFIG_D="x y"\n'
            "# a comment\n\nCONFIG_A=n\n")
    assert kf.parse_kconfig(text) == {"A": "n", "B": "m", "C": "n", "D": '"x y"'}


def test_fragment_problems_named():
    text = FRAGMENT.read_text().replace("CONFIG_NET_SCH_CAKE=y", "CONFIG_NET_SCH_CAKE=m")
    text = text.replace("CONFIG_IFB=y\n", "")
    text += "CONFIG_SOMETHING_ELSE=y\n"
    problems = kf.check_fragment(text)
    assert len(problems) == 3
    assert any("NET_SCH_CAKE=m" in p and "y needed" in p for p in problems)
    assert any("CONFIG_IFB missing" in p for p in problems)
    assert any("CONFIG_SOMETHING_ELSE" in p and "not in the feature list" in p for p in problems)


def test_final_config_complete_and_incomplete():
    fragment = FRAGMENT.read_text()
    final = fragment + "CONFIG_OTHER=y\n"
    assert kf.check_final_config(fragment, final) == []
    dropped = final.replace("CONFIG_HALTPOLL_CPUIDLE=y", "# CONFIG_HALTPOLL_CPUIDLE is not set")
    dropped = dropped.replace("CONFIG_IFB=y", "CONFIG_IFB=m")
    problems = kf.check_final_config(fragment, dropped)
    assert len(problems) == 2
    assert any("HALTPOLL_CPUIDLE=y asked" in p and "not set" in p for p in problems)
    assert any("IFB=y asked" in p and "=m" in p for p in problems)


def test_check_script(tmp_path):
    good = subprocess.run([str(CHECK), "--fragment", str(FRAGMENT)],
                          capture_output=True, text=True)
    assert good.returncode == 0, good.stderr
    config = tmp_path / ".config"
    config.write_text(FRAGMENT.read_text())
    ok = subprocess.run([str(CHECK), str(config), str(FRAGMENT)], capture_output=True, text=True)
    assert ok.returncode == 0, ok.stderr
    config.write_text(FRAGMENT.read_text().replace("CONFIG_WIREGUARD=y", ""))
    bad = subprocess.run([str(CHECK), str(config), str(FRAGMENT)], capture_output=True, text=True)
    assert bad.returncode == 1
    assert "CONFIG_WIREGUARD=y asked" in bad.stderr


def test_runtime_presence_from_config_gz_text():
    config = FRAGMENT.read_text().replace("CONFIG_NET_SCH_CAKE=y", "CONFIG_NET_SCH_CAKE=m")
    config = config.replace("CONFIG_IFB=y", "# CONFIG_IFB is not set")
    present = kf.runtime_presence(config)
    assert present["sch_cake"] is True
    assert present["ifb"] is False
    assert set(present) == set(kf.doctor_modules())


def test_runtime_presence_from_module_listings():
    builtin = "kernel/net/sched/sch_cake.ko\nkernel/drivers/net/ifb.ko\n"
    dep = ("kernel/drivers/net/wireguard/wireguard.ko.zst: kernel/lib/crypto/libchacha.ko.zst\n"
           "kernel/net/sched/act_mirred.ko.xz:\n")
    loaded = "nf_tables 356352 0 - Live 0x0000000000000000\n"
    present = kf.runtime_presence(None, modules_builtin=builtin, modules_dep=dep,
                                  proc_modules=loaded)
    assert present["sch_cake"] and present["ifb"] and present["wireguard"]
    assert present["act_mirred"] and present["nf_tables"]
    assert not present["nft_masq"]
    everything = kf.runtime_presence(None, modules_builtin=builtin, only_doctor=False)
    assert everything["net_cls_act"] is False  # no module, no config: unknown is absent
