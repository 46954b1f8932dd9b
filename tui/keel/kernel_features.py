"""The kernel features the router needs, and the drivers of the machines it is
flashed onto: the one list.

Its users:
- ``board/keel/x86_64/linux.fragment`` (the release kernel's config fragment) is
  rendered from it (:func:`render_fragment`) and checked against it by
  ``make check`` and the unit tests (:func:`check_fragment`);
- ``make check`` resolves x86_64_defconfig + the fragment as Buildroot does
  (``buildroot-external/scripts/resolve-kernel-config.sh``), and after
  Buildroot's kernel build ``buildroot-external/scripts/check-kernel-config``
  looks at the final ``.config``: both prove that every option of the fragment
  survived (:func:`check_final_config`); kconfig drops an option whose
  dependencies are missing without a word;
- the dev image's build checks that its Debian kernel has every module named
  here (:func:`modules`), and the release image's linux-firmware selection
  holds every firmware file named here (tests/unit/test_release_firmware.py);
- ``keel doctor`` asks the running kernel (``/proc/config.gz``, or
  ``modules.builtin``/``modules.dep``/``/proc/modules``) with
  :func:`runtime_presence`.

Everything here is pure (text in, verdicts out) and standard library only, so
that the build host's Python can import it without the keel package's
dependencies.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# Areas, in the order the fragment lists them.
SHAPING = "shaping"
TUNNEL = "tunnel and routing"
NFTABLES = "nftables"
VM = "virtual machines (guest support)"
BOOT = "boot and filesystems"
STORAGE = "storage: built in, the root disk is found without an initramfs"
UPGRADE = "upgrades (RAUC)"
CONSOLE = "console: screen and keyboard"
NIC = "NICs: built in, or modules S05modules loads before keel apply --boot"
CPU = "CPU clock and idle"

# The areas of hardware drivers: each of their entries names the machines
# that need it (Feature.machines).
HARDWARE_AREAS = (VM, STORAGE, CONSOLE, NIC)

# The machines, as the entries name them.
EVERY = "every machine"
KVM = "KVM VPSes (Hetzner, DigitalOcean, Vultr, OVH, Linode), Proxmox, GCP E2/N2, the lab"
AWS = "AWS Nitro (every current instance type)"
AWS_XEN = "older AWS Xen instance types"
GCP = "GCP C3/C4/N4 and other gVNIC-only types"
HYPERV_HOSTS = "Azure, Hyper-V"
XEN_HOSTS = "Xen HVM guests, older AWS Xen instance types"
VMWARE = "VMware ESXi/Workstation defaults"
EMULATED = "VirtualBox, QEMU's older machine types, Hyper-V Gen1, Xen HVM"
MINIPC = "mini-PCs"
INTEL_GPU = "Intel-graphics mini-PCs (N100, N5105, J4125), VPSes with virtio-vga"
UEFI = "UEFI machines (a firmware framebuffer, no VGA text mode)"
USB_BOOT = "any machine booted from a USB stick or a USB disk"
TEN_G = "10G and faster boxes and servers"
USB_NIC = "any machine with a USB NIC (a second port for a one-NIC mini-PC or laptop)"
SCSI_DISKS = ("every machine whose disk is SATA, IDE, USB, virtio-scsi, VMware, LSI, "
              "MegaRAID or Hyper-V")


@dataclass(frozen=True)
class Feature:
    """One kernel option keel relies on.

    value: what the release kernel sets: "y" (built in; storage must be, there
    is no initramfs) or "m" for a NIC driver that loads firmware at probe
    time (built in, it would probe before the root filesystem holds
    /lib/firmware). machines: who needs it (EVERY unless said).
    firmware: files under /lib/firmware the driver loads on those machines
    (the release image's linux-firmware selection must hold them)."""

    symbol: str  # Kconfig symbol without CONFIG_
    area: str
    why: str
    module: str | None = None  # the module it builds as, where it can be one
    value: str = "y"
    doctor: bool = False  # keel doctor checks it on the running kernel
    machines: str = EVERY
    firmware: tuple[str, ...] = ()

    @property
    def name(self) -> str:
        """The name keel doctor reports: the module where there is one."""
        return self.module or self.symbol.lower()


def _f(symbol: str, area: str, why: str, module: str | None = None, *,
       value: str = "y", doctor: bool = False, machines: str = EVERY,
       firmware: tuple[str, ...] = ()) -> Feature:
    return Feature(symbol, area, why, module, value, doctor, machines, firmware)


# r8169's firmware files in Linux 6.12 (drivers/net/ethernet/realtek/r8169_main.c):
# PHY and MAC fixes, loaded when the interface comes up
R8169_FIRMWARE = tuple(f"rtl_nic/{name}.fw" for name in (
    "rtl8105e-1", "rtl8106e-1", "rtl8106e-2", "rtl8107e-2", "rtl8168d-1", "rtl8168d-2",
    "rtl8168e-1", "rtl8168e-2", "rtl8168e-3", "rtl8168f-1", "rtl8168f-2", "rtl8168fp-3",
    "rtl8168g-2", "rtl8168g-3", "rtl8168h-2", "rtl8402-1", "rtl8411-1", "rtl8411-2",
    "rtl8125a-3", "rtl8125b-2", "rtl8125d-1", "rtl8126a-2", "rtl8126a-3"))
# r8152's (drivers/net/usb/r8152.c): optional patches, retried 10 s after probe
R8152_FIRMWARE = tuple(f"rtl_nic/{name}.fw" for name in (
    "rtl8153a-2", "rtl8153a-3", "rtl8153a-4", "rtl8153b-2", "rtl8153c-1", "rtl8156a-2",
    "rtl8156b-2"))
# ice's Dynamic Device Personalization package: without it the E810 runs in
# "safe mode" (one queue, no offloads)
ICE_FIRMWARE = ("intel/ice/ddp/ice.pkg",)


FEATURES: tuple[Feature, ...] = (
    # --- shaping: CAKE on egress, and on ingress through an IFB -------------
    _f("NET_SCHED", SHAPING, "traffic control (tc) at all"),
    _f("NET_SCH_CAKE", SHAPING, "CAKE shapes egress and (on the IFB) ingress", "sch_cake",
       doctor=True),
    _f("NET_SCH_FQ_CODEL", SHAPING, "fair queueing on every interface CAKE does not shape",
       "sch_fq_codel", doctor=True),
    _f("NET_SCH_DEFAULT", SHAPING, "lets the default qdisc be chosen"),
    _f("DEFAULT_FQ_CODEL", SHAPING, "fq_codel, not pfifo_fast, as the default qdisc"),
    _f("NET_SCH_INGRESS", SHAPING, "the ingress hook that redirects WAN traffic to the IFB",
       "sch_ingress", doctor=True),
    _f("NET_CLS_ACT", SHAPING, "tc actions (needed by mirred and the ingress qdisc)"),
    _f("NET_CLS_MATCHALL", SHAPING, "matchall filter: all ingress traffic to the IFB",
       "cls_matchall", doctor=True),
    _f("NET_CLS_U32", SHAPING, "u32 filter, the fallback classifier for ingress redirection",
       "cls_u32", doctor=True),
    _f("NET_ACT_MIRRED", SHAPING, "mirred action: redirect ingress to ifb4<wan>", "act_mirred",
       doctor=True),
    _f("IFB", SHAPING, "intermediate functional block: shape ingress as egress", "ifb",
       doctor=True),
    # --- tunnel and routing -------------------------------------------------
    _f("WIREGUARD", TUNNEL, "the WireGuard tunnel", "wireguard", doctor=True),
    _f("IPV6", TUNNEL, "IPv6 on WAN, LAN and in the tunnel", "ipv6"),
    _f("IP_ADVANCED_ROUTER", TUNNEL, "policy routing menu"),
    _f("IP_MULTIPLE_TABLES", TUNNEL, "IPv4 policy routing (tunnel routing tables)"),
    _f("IPV6_MULTIPLE_TABLES", TUNNEL, "IPv6 policy routing (tunnel routing tables)"),
    _f("RPS", TUNNEL, "receive packet steering on single-queue NICs"),
    _f("XPS", TUNNEL, "transmit packet steering on single-queue NICs"),
    # --- nftables: firewall, NAT/masquerade, flowtable ----------------------
    _f("NETFILTER", NFTABLES, "packet filtering at all"),
    _f("NETFILTER_ADVANCED", NFTABLES, "makes the nftables expressions below selectable"),
    _f("NETFILTER_INGRESS", NFTABLES, "netdev ingress hook (flowtables)"),
    _f("NF_CONNTRACK", NFTABLES, "connection tracking: stateful firewall and NAT",
       "nf_conntrack", doctor=True),
    _f("NF_NAT", NFTABLES, "NAT core", "nf_nat", doctor=True),
    _f("NF_TABLES", NFTABLES, "nftables", "nf_tables", doctor=True),
    _f("NF_TABLES_INET", NFTABLES, "inet family: one ruleset for IPv4 and IPv6"),
    _f("NF_TABLES_IPV4", NFTABLES, "ip family (NAT chains)"),
    _f("NF_TABLES_IPV6", NFTABLES, "ip6 family"),
    _f("NF_TABLES_NETDEV", NFTABLES, "netdev family (ingress, flowtables)"),
    _f("NFT_CT", NFTABLES, "ct expression: ct state established,related accept", "nft_ct",
       doctor=True),
    _f("NFT_NAT", NFTABLES, "nat expression (snat/dnat)", "nft_nat", doctor=True),
    _f("NFT_MASQ", NFTABLES, "masquerade on the WAN", "nft_masq", doctor=True),
    _f("NFT_REJECT", NFTABLES, "reject with ICMP/TCP reset", "nft_reject", doctor=True),
    _f("NFT_LOG", NFTABLES, "log expression", "nft_log"),
    _f("NFT_LIMIT", NFTABLES, "limit expression (ICMP and log rate limits)", "nft_limit"),
    _f("NFT_FIB_IPV4", NFTABLES, "fib expression, IPv4 (needed by fib inet)", "nft_fib_ipv4"),
    _f("NFT_FIB_IPV6", NFTABLES, "fib expression, IPv6 (needed by fib inet)", "nft_fib_ipv6"),
    _f("NFT_FIB_INET", NFTABLES, "fib expression: reverse path filter", "nft_fib_inet",
       doctor=True),
    _f("NF_FLOW_TABLE", NFTABLES, "flowtable: software fast path for forwarded flows",
       "nf_flow_table"),
    _f("NF_FLOW_TABLE_INET", NFTABLES, "flowtable for the inet family", "nf_flow_table_inet",
       doctor=True),
    _f("NFT_FLOW_OFFLOAD", NFTABLES, "flow offload expression (flow add @ft)",
       "nft_flow_offload", doctor=True),
    # --- virtual machines: the guest side of each hypervisor ----------------
    _f("VIRTIO_PCI", VM, "virtio devices on PCI", "virtio_pci", machines=KVM),
    _f("VIRTIO_CONSOLE", VM, "virtio console", "virtio_console", machines=KVM),
    _f("HW_RANDOM_VIRTIO", VM, "entropy from the host (WireGuard keys at first boot)",
       "virtio_rng", machines=KVM),
    _f("HYPERVISOR_GUEST", VM, "guest support menu (for KVM_GUEST, HYPERV, XEN)",
       machines="every virtual machine"),
    _f("PARAVIRT", VM, "paravirt steal clock: steal time in /proc/stat",
       machines="every virtual machine"),
    _f("KVM_GUEST", VM, "KVM guest: steal time, kvmclock, haltpoll", machines=f"{KVM}, {AWS}"),
    _f("HALTPOLL_CPUIDLE", VM, "haltpoll: poll before halting, lower wake-up latency in a VM",
       "cpuidle_haltpoll", machines=f"{KVM}, {AWS}"),
    _f("HYPERV", VM, "Hyper-V VMBus: every synthetic device hangs off it", "hv_vmbus",
       machines=HYPERV_HOSTS),
    _f("HYPERV_UTILS", VM, "Hyper-V integration services: shutdown from the host, time sync",
       "hv_utils", machines=HYPERV_HOSTS),
    _f("PCI_HYPERV", VM, "Hyper-V PCI pass-through: the VFs of Azure's accelerated networking",
       "pci_hyperv", machines="Azure with accelerated networking"),
    _f("XEN", VM, "Xen guest support", machines=XEN_HOSTS),
    _f("XEN_PVHVM_GUEST", VM, "Xen PVHVM: paravirtual devices in a hardware-virtualised guest",
       machines=XEN_HOSTS),
    # --- boot without an initramfs, filesystems -----------------------------
    _f("EFI", BOOT, "boots by UEFI"),
    _f("EFI_STUB", BOOT, "GRUB's EFI loader starts the kernel as an EFI image"),
    _f("EFI_PARTITION", BOOT, "GPT disks (root=PARTLABEL=keel-root-a or -b)"),
    _f("DEVTMPFS", BOOT, "/dev without udev"),
    _f("DEVTMPFS_MOUNT", BOOT, "/dev mounted before init runs"),
    _f("TMPFS", BOOT, "/run and /tmp on a read-only root"),
    _f("SQUASHFS", BOOT, "the read-only root filesystem", "squashfs"),
    _f("SQUASHFS_ZSTD", BOOT, "the root is zstd-compressed"),
    _f("EXT4_FS", BOOT, "/data (KEEL_DATA)", "ext4"),
    _f("VFAT_FS", BOOT, "the EFI system partition", "vfat"),
    _f("NLS_CODEPAGE_437", BOOT, "FAT's default codepage (ESP)", "nls_cp437"),
    _f("NLS_ISO8859_1", BOOT, "FAT's default iocharset (ESP)", "nls_iso8859_1"),
    _f("OVERLAY_FS", BOOT, "writable overlays over the read-only root", "overlay"),
    _f("IKCONFIG", BOOT, "the kernel's config inside the kernel", "configs"),
    _f("IKCONFIG_PROC", BOOT, "/proc/config.gz: what keel doctor reads"),
    # --- storage: every disk keel is flashed onto, built in -----------------
    _f("VIRTIO_BLK", STORAGE, "virtio disk", "virtio_blk", machines=KVM),
    _f("SCSI", STORAGE, "SCSI core", "scsi_mod", machines=SCSI_DISKS),
    _f("BLK_DEV_SD", STORAGE, "SCSI disks (sdX)", "sd_mod", machines=SCSI_DISKS),
    _f("SCSI_VIRTIO", STORAGE, "virtio-scsi disk", "virtio_scsi",
       machines="KVM VPSes with virtio-scsi disks, GCP"),
    _f("BLK_DEV_NVME", STORAGE, "NVMe disks", "nvme", machines=f"{AWS}, GCP, {MINIPC}"),
    _f("VMD", STORAGE, "Intel Volume Management Device: NVMe behind VMD ('RAID' mode)", "vmd",
       machines="Intel 11th-gen and later mini-PCs and laptops with VMD on"),
    _f("ATA", STORAGE, "ATA/SATA core", "libata", machines=f"{MINIPC}, {EMULATED}"),
    _f("SATA_AHCI", STORAGE, "SATA disks (AHCI)", "ahci",
       machines=f"{MINIPC}, VirtualBox, VMware SATA, QEMU q35"),
    _f("ATA_PIIX", STORAGE, "Intel PIIX/ICH IDE and SATA", "ata_piix", machines=EMULATED),
    _f("VMWARE_PVSCSI", STORAGE, "VMware paravirtual SCSI", "vmw_pvscsi", machines=VMWARE),
    _f("FUSION", STORAGE, "LSI Fusion MPT menu"),
    _f("FUSION_SPI", STORAGE, "LSI Logic parallel SCSI (LSI53C1030)", "mptspi",
       machines=f"{VMWARE} (LSI Logic Parallel)"),
    _f("FUSION_SAS", STORAGE, "LSI Logic SAS (SAS1068)", "mptsas",
       machines=f"{VMWARE} (LSI Logic SAS)"),
    _f("MEGARAID_SAS", STORAGE, "LSI/Broadcom MegaRAID SAS RAID", "megaraid_sas",
       machines="servers with a MegaRAID controller, dedicated servers"),
    _f("HYPERV_STORAGE", STORAGE, "Hyper-V synthetic SCSI disk (storvsc)", "hv_storvsc",
       machines=f"{HYPERV_HOSTS} (Gen2 boots only from it)"),
    _f("XEN_BLKDEV_FRONTEND", STORAGE, "Xen virtual disk (blkfront)", "xen_blkfront",
       machines=XEN_HOSTS),
    _f("MMC", STORAGE, "MMC/SD core", "mmc_core", machines="eMMC-only mini-PCs"),
    _f("MMC_BLOCK", STORAGE, "eMMC and SD cards as disks", "mmc_block",
       machines="eMMC-only mini-PCs"),
    _f("MMC_SDHCI", STORAGE, "SD host controller interface", "sdhci",
       machines="eMMC-only mini-PCs"),
    _f("MMC_SDHCI_PCI", STORAGE, "SDHCI on PCI (Intel eMMC controllers)", "sdhci_pci",
       machines="eMMC-only mini-PCs"),
    _f("MMC_SDHCI_ACPI", STORAGE, "SDHCI enumerated by ACPI (Atom/Celeron eMMC)", "sdhci_acpi",
       machines="eMMC-only mini-PCs (Atom, Celeron J/N)"),
    _f("USB", STORAGE, "USB core", "usbcore", machines=USB_BOOT),
    _f("USB_XHCI_HCD", STORAGE, "USB 3 host controller", "xhci_hcd", machines=USB_BOOT),
    _f("USB_XHCI_PCI", STORAGE, "xHCI on PCI", "xhci_pci", machines=USB_BOOT),
    _f("USB_EHCI_HCD", STORAGE, "USB 2 host controller", "ehci_hcd",
       machines=f"{USB_BOOT} (older boxes, USB 2 ports)"),
    _f("USB_EHCI_PCI", STORAGE, "EHCI on PCI", "ehci_pci",
       machines=f"{USB_BOOT} (older boxes, USB 2 ports)"),
    _f("USB_STORAGE", STORAGE, "USB mass storage: sticks and disks", "usb_storage",
       machines=USB_BOOT),
    _f("USB_UAS", STORAGE, "USB Attached SCSI: most USB 3 disks and fast sticks", "uas",
       machines=USB_BOOT),
    # --- upgrades: RAUC opens a signed verity bundle (the slot images inside
    # are squashfs and vfat: SQUASHFS and VFAT_FS above) ---------------------
    _f("BLK_DEV_LOOP", UPGRADE, "loop devices: RAUC mounts the bundle file's squashfs",
       "loop"),
    _f("MD", UPGRADE, "multiple devices menu (for the device mapper)"),
    _f("BLK_DEV_DM", UPGRADE, "device mapper: dm-verity under the bundle", "dm_mod"),
    _f("DM_VERITY", UPGRADE, "dm-verity: every block of a verity bundle checked on read",
       "dm_verity"),
    _f("CRYPTO_SHA256", UPGRADE, "SHA-256: dm-verity's hash tree", "sha256_generic"),
    _f("BLK_DEV_NBD", UPGRADE, "network block device: keel upgrade URL streams the bundle",
       "nbd"),
    # a kernel that hangs resets through a hardware watchdog (S05watchdog):
    # GRUB then counts the boot as a try, as it does a panic
    _f("WATCHDOG", UPGRADE, "watchdog drivers menu"),
    _f("I6300ESB_WDT", UPGRADE, "QEMU/KVM's i6300esb watchdog (Proxmox, libvirt VPSes)",
       "i6300esb"),
    _f("ITCO_WDT", UPGRADE, "Intel TCO watchdog (mini-PCs)", "iTCO_wdt"),
    _f("SP5100_TCO", UPGRADE, "AMD SP5100/FCH TCO watchdog (mini-PCs)", "sp5100_tco"),
    # --- console: tty1 must survive the GPU's KMS driver --------------------
    # x86_64_defconfig builds in i915 and virtio-gpu, which remove the
    # firmware framebuffer when they bind: without fbdev emulation the text
    # console then has nothing to draw on (the first-boot dialog is invisible)
    _f("SERIAL_8250", CONSOLE, "serial console", machines="VPS consoles, headless mini-PCs"),
    _f("SERIAL_8250_CONSOLE", CONSOLE, "kernel messages on ttyS0",
       machines="VPS consoles, headless mini-PCs"),
    _f("VGA_CONSOLE", CONSOLE, "VGA text mode console", machines="BIOS boots"),
    _f("FB", CONSOLE, "framebuffer: the console UI on machines without VGA text mode",
       machines=UEFI),
    _f("FB_EFI", CONSOLE, "EFI GOP framebuffer (where sysfb offers no simple framebuffer)",
       machines=UEFI),
    _f("SYSFB_SIMPLEFB", CONSOLE, "the firmware's framebuffer offered as a simple framebuffer "
       "(for simpledrm)", machines=UEFI),
    _f("DRM", CONSOLE, "DRM/KMS core (i915 and virtio-gpu are built in)", "drm",
       machines=INTEL_GPU),
    _f("DRM_SIMPLEDRM", CONSOLE, "simpledrm: the firmware framebuffer as a DRM device, handed "
       "over cleanly when the GPU driver binds", "simpledrm", machines=UEFI),
    _f("DRM_FBDEV_EMULATION", CONSOLE, "fbdev on every KMS driver: the console survives i915, "
       "virtio-gpu, simpledrm", machines=INTEL_GPU),
    _f("FRAMEBUFFER_CONSOLE", CONSOLE, "tty1 on the framebuffer", machines=f"{UEFI}, {INTEL_GPU}"),
    _f("INPUT_KEYBOARD", CONSOLE, "keyboard drivers menu"),
    _f("SERIO_I8042", CONSOLE, "i8042 PS/2 controller", "i8042",
       machines="virtual machines' keyboards, BIOS USB legacy emulation"),
    _f("KEYBOARD_ATKBD", CONSOLE, "AT/PS/2 keyboard", "atkbd",
       machines="virtual machines' keyboards, BIOS USB legacy emulation"),
    _f("HID_SUPPORT", CONSOLE, "HID menu", machines=MINIPC),
    _f("HID", CONSOLE, "HID core", "hid", machines=MINIPC),
    _f("HID_GENERIC", CONSOLE, "generic HID driver: keyboards", "hid_generic", machines=MINIPC),
    _f("USB_HID", CONSOLE, "USB keyboards", "usbhid", machines=f"{MINIPC}, USB keyboards anywhere"),
    _f("HYPERV_KEYBOARD", CONSOLE, "Hyper-V synthetic keyboard (Gen2 has no i8042)",
       "hyperv_keyboard", machines=HYPERV_HOSTS),
    # --- NICs ---------------------------------------------------------------
    # built in where the driver needs no firmware at probe time; S05modules
    # loads the others (PCI class 02) before S40keel runs keel apply --boot
    _f("VIRTIO_NET", NIC, "virtio NIC", "virtio_net", machines=KVM),
    _f("NET_VENDOR_AMAZON", NIC, "Amazon NIC drivers menu", machines=AWS),
    _f("ENA_ETHERNET", NIC, "Amazon Elastic Network Adapter", "ena", machines=AWS),
    _f("NET_VENDOR_GOOGLE", NIC, "Google NIC drivers menu", machines=GCP),
    _f("GVE", NIC, "Google Virtual NIC (gVNIC)", "gve", machines=GCP),
    _f("HYPERV_NET", NIC, "Hyper-V synthetic NIC (netvsc)", "hv_netvsc", machines=HYPERV_HOSTS),
    _f("XEN_NETDEV_FRONTEND", NIC, "Xen virtual NIC (netfront)", "xen_netfront",
       machines=XEN_HOSTS),
    _f("VMXNET3", NIC, "VMware paravirtual NIC", "vmxnet3", machines=VMWARE),
    _f("NET_VENDOR_INTEL", NIC, "Intel NIC drivers menu"),
    _f("E1000", NIC, "Intel 8254x (QEMU's and VirtualBox's default e1000)", "e1000",
       machines=EMULATED),
    _f("E1000E", NIC, "Intel I219 and 8257x GbE", "e1000e",
       machines=f"{MINIPC}, VMware e1000e, QEMU q35"),
    _f("IGB", NIC, "Intel I210/I211/I350 GbE", "igb", machines=MINIPC),
    _f("IGC", NIC, "Intel I225/I226 2.5 GbE", "igc", machines="most router mini-PCs"),
    _f("IXGBE", NIC, "Intel 82599/X520/X540/X550/X553 10 GbE", "ixgbe", machines=TEN_G),
    _f("IXGBEVF", NIC, "Intel 82599 virtual function (SR-IOV)", "ixgbevf",
       machines=f"{AWS_XEN} (enhanced networking), SR-IOV VMs"),
    _f("I40E", NIC, "Intel X710/XL710 10/25/40 GbE", "i40e", machines=TEN_G),
    _f("I40EVF", NIC, "Intel adaptive virtual function (iavf: X710/E810 VFs)", "iavf",
       machines="SR-IOV VMs on X710/E810 hosts"),
    _f("ICE", NIC, "Intel E810 25/100 GbE (a module: its DDP package loads at probe time, "
       "from the root filesystem)", "ice", value="m", machines=TEN_G, firmware=ICE_FIRMWARE),
    _f("NET_VENDOR_MELLANOX", NIC, "Mellanox NIC drivers menu",
       machines=f"{TEN_G}, Azure accelerated networking"),
    _f("MLX4_EN", NIC, "Mellanox ConnectX-3 (and its VFs)", "mlx4_en",
       machines=f"{TEN_G}, Azure accelerated networking (older hosts)"),
    _f("MLX5_CORE", NIC, "Mellanox ConnectX-4 and later core", "mlx5_core",
       machines=f"{TEN_G}, Azure accelerated networking"),
    _f("MLX5_CORE_EN", NIC, "Mellanox ConnectX-4 and later Ethernet (and its VFs)",
       machines=f"{TEN_G}, Azure accelerated networking"),
    _f("NET_VENDOR_AQUANTIA", NIC, "Aquantia NIC drivers menu", machines=TEN_G),
    _f("AQTION", NIC, "Aquantia/Marvell AQC107/AQC113 2.5-10 GbE", "atlantic",
       machines=f"{TEN_G}, 10G mini-PCs"),
    _f("NET_VENDOR_REALTEK", NIC, "Realtek NIC drivers menu"),
    _f("R8169", NIC, "Realtek RTL8111/8125/8126 (1, 2.5 and 5 GbE)", "r8169",
       machines="Realtek mini-PCs", firmware=R8169_FIRMWARE),
    _f("USB_NET_DRIVERS", NIC, "USB NIC drivers menu", machines=USB_NIC),
    _f("USB_RTL8152", NIC, "Realtek RTL8152/8153/8156 USB NICs (1 and 2.5 GbE)", "r8152",
       machines=USB_NIC, firmware=R8152_FIRMWARE),
    _f("USB_USBNET", NIC, "USB NIC framework", "usbnet", machines=USB_NIC),
    _f("USB_NET_AX88179_178A", NIC, "ASIX AX88179/178A USB 3 GbE", "ax88179_178a",
       machines=USB_NIC),
    _f("USB_NET_CDCETHER", NIC, "CDC Ethernet: class-compliant USB NICs, phones", "cdc_ether",
       machines=USB_NIC),
    _f("USB_NET_CDC_NCM", NIC, "CDC NCM: class-compliant USB 3 NICs", "cdc_ncm",
       machines=USB_NIC),
    # --- CPU clock and idle states ------------------------------------------
    _f("CPU_FREQ", CPU, "cpufreq at all"),
    _f("CPU_FREQ_GOV_PERFORMANCE", CPU, "the performance governor"),
    _f("CPU_FREQ_DEFAULT_GOV_PERFORMANCE", CPU, "performance from the first instant of boot"),
    _f("X86_INTEL_PSTATE", CPU, "Intel P-state driver"),
    _f("X86_AMD_PSTATE", CPU, "AMD P-state driver"),
    _f("ACPI_PROCESSOR", CPU, "ACPI processor (C-states, ACPI cpufreq)", "processor"),
    _f("X86_ACPI_CPUFREQ", CPU, "ACPI cpufreq for CPUs without a P-state driver",
       "acpi_cpufreq"),
    _f("CPU_IDLE", CPU, "cpuidle: idle states visible and limitable (PM QoS)"),
    _f("CPU_IDLE_GOV_MENU", CPU, "menu idle governor"),
    _f("INTEL_IDLE", CPU, "Intel idle driver (intel_idle.max_cstate)"),
)

BY_SYMBOL: dict[str, Feature] = {f.symbol: f for f in FEATURES}

_SET = re.compile(r"^CONFIG_([A-Za-z0-9_]+)=(.*)$")
_UNSET = re.compile(r"^# CONFIG_([A-Za-z0-9_]+) is not set$")


def parse_kconfig(text: str) -> dict[str, str]:
    """A .config or fragment as symbol -> value ("y", "m", "n", a string or number).

    "# CONFIG_X is not set" reads as "n"; a later line wins, as in merge_config.
    """
    values: dict[str, str] = {}
    for raw in text.splitlines():
        line = raw.strip()
        if m := _SET.match(line):
            values[m.group(1)] = m.group(2)
        elif m := _UNSET.match(line):
            values[m.group(1)] = "n"
    return values


def check_fragment(fragment_text: str,
                   features: tuple[Feature, ...] = FEATURES) -> list[str]:
    """Problems of a kernel config fragment against the list (empty: none).

    Every listed feature must be set to its value, and every option the fragment
    sets must be on the list: the list and the fragment say the same.
    """
    frag = parse_kconfig(fragment_text)
    wanted = {f.symbol: f for f in features}
    problems = []
    for f in features:
        got = frag.get(f.symbol)
        if got is None:
            problems.append(f"CONFIG_{f.symbol} missing from the fragment ({f.why})")
        elif got != f.value:
            problems.append(f"CONFIG_{f.symbol}={got} in the fragment, {f.value} needed "
                            f"({f.why})")
    for symbol in sorted(set(frag) - set(wanted)):
        problems.append(f"CONFIG_{symbol} is in the fragment but not in the feature list "
                        f"(keel/kernel_features.py): add it there with the reason")
    return problems


def check_final_config(fragment_text: str, config_text: str) -> list[str]:
    """Options of the fragment that did not reach the final .config (empty: all did).

    An option whose dependencies are missing is dropped by kconfig without a word;
    this is the proof that it did not happen. An option absent from the final
    .config was invisible to kconfig (a dependency off, or a name it does not
    know); one there as "not set" was turned off (a choice, a "depends on !X",
    a bool that cannot be a module).
    """
    final = parse_kconfig(config_text)
    problems = []
    for symbol, want in parse_kconfig(fragment_text).items():
        got = final.get(symbol)
        if got == want or (got is None and want == "n"):
            continue
        why = BY_SYMBOL[symbol].why if symbol in BY_SYMBOL else "set by the fragment"
        if got is None:
            problems.append(f"CONFIG_{symbol}={want} asked, final .config lacks it ({why}): "
                            f"a dependency is off, or kconfig does not know the name")
        else:
            shown = "not set" if got == "n" else f"={got}"
            problems.append(f"CONFIG_{symbol}={want} asked, final .config has it {shown} "
                            f"({why}): a dependency is missing")
    return problems


def module_names(*listings: str) -> set[str]:
    """Module names from modules.builtin, modules.dep or /proc/modules text."""
    names: set[str] = set()
    for text in listings:
        for line in text.splitlines():
            line = line.strip()
            if not line:
                continue
            first = line.split(":", 1)[0].split()[0]
            base = first.rsplit("/", 1)[-1]
            base = re.sub(r"\.ko(\.[a-z0-9]+)?$", "", base)
            names.add(base.replace("-", "_"))
    return names


def runtime_presence(config_text: str | None = None, *, modules_builtin: str = "",
                     modules_dep: str = "", proc_modules: str = "",
                     features: tuple[Feature, ...] = FEATURES,
                     only_doctor: bool = True) -> dict[str, bool]:
    """What keel doctor reports: feature name -> present on the running kernel.

    config_text: the text of /proc/config.gz (decompressed), when the kernel has
    IKCONFIG_PROC; a feature is present when its symbol is y or m there. Without
    it (or for a symbol it does not mention), a feature with a module is present
    when the module is built in (modules.builtin), installed (modules.dep) or
    loaded (/proc/modules).
    """
    config = parse_kconfig(config_text) if config_text else {}
    modules = module_names(modules_builtin, modules_dep, proc_modules)
    result: dict[str, bool] = {}
    for f in features:
        if only_doctor and not f.doctor:
            continue
        if f.symbol in config:
            present = config[f.symbol] in ("y", "m")
        else:
            present = f.module is not None and f.module in modules
        result[f.name] = present
    return result


def modules(features: tuple[Feature, ...] = FEATURES) -> tuple[str, ...]:
    """The module name of every feature that has one (built in or not)."""
    return tuple(f.module for f in features if f.module)


def doctor_modules(features: tuple[Feature, ...] = FEATURES) -> tuple[str, ...]:
    """The module names keel doctor checks."""
    return tuple(f.module for f in features if f.doctor and f.module)


RENDER_COMMAND = ("buildroot-external/scripts/check-kernel-config --render "
                  "> board/keel/x86_64/linux.fragment")


def render_fragment(features: tuple[Feature, ...] = FEATURES) -> str:
    """The fragment the list asks for, grouped by area, each option under a
    comment with its reason and, for hardware, the machines that need it."""
    lines = ["# keel release kernel: config fragment over x86_64_defconfig.",
             "# Rendered from tui/keel/kernel_features.py: edit the list there, then",
             f"#   {RENDER_COMMAND}"]
    area = None
    for f in features:
        if f.area != area:
            area = f.area
            lines += ["", f"# --- {area}"]
        lines.append(f"# {f.why}" + ("" if f.machines == EVERY else f" [{f.machines}]"))
        lines.append(f"CONFIG_{f.symbol}={f.value}")
    return "\n".join(lines) + "\n"
