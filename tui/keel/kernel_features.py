"""The kernel features the router needs: the one list.

Three users, one list:
- ``board/keel/x86_64/linux.fragment`` (the release kernel's config fragment) is
  checked against it by ``make check`` and the unit tests (:func:`check_fragment`);
- after Buildroot's kernel build, ``buildroot-external/scripts/check-kernel-config``
  proves that every option of the fragment reached the final ``.config``
  (:func:`check_final_config`): options whose dependencies are missing drop out
  of a kernel configuration silently;
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
VM = "virtual machine"
BOOT = "boot and filesystems"
UPGRADE = "upgrades (RAUC)"
CONSOLE = "console"
NIC = "mini-PC hardware"
CPU = "CPU clock and idle"


@dataclass(frozen=True)
class Feature:
    symbol: str  # Kconfig symbol without CONFIG_
    area: str
    why: str
    module: str | None = None  # the module it builds as, where it can be one
    value: str = "y"  # what the release kernel sets (built in: no initramfs)
    doctor: bool = False  # keel doctor checks it on the running kernel

    @property
    def name(self) -> str:
        """The name keel doctor reports: the module where there is one."""
        return self.module or self.symbol.lower()


def _f(symbol: str, area: str, why: str, module: str | None = None, *,
       value: str = "y", doctor: bool = False) -> Feature:
    return Feature(symbol, area, why, module, value, doctor)


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
    # --- virtual machines (VPS, the QEMU lab) -------------------------------
    _f("VIRTIO_PCI", VM, "virtio devices on PCI", "virtio_pci"),
    _f("VIRTIO_NET", VM, "virtio NIC", "virtio_net"),
    _f("VIRTIO_BLK", VM, "virtio disk (root and /data)", "virtio_blk"),
    _f("SCSI_VIRTIO", VM, "virtio-scsi disk (some VPS hosts)", "virtio_scsi"),
    _f("VIRTIO_CONSOLE", VM, "virtio console", "virtio_console"),
    _f("HW_RANDOM_VIRTIO", VM, "entropy from the host (WireGuard keys at first boot)",
       "virtio_rng"),
    _f("HYPERVISOR_GUEST", VM, "guest support menu (for KVM_GUEST)"),
    _f("PARAVIRT", VM, "paravirt steal clock: steal time in /proc/stat"),
    _f("KVM_GUEST", VM, "KVM guest: steal time, kvmclock, haltpoll"),
    _f("HALTPOLL_CPUIDLE", VM, "haltpoll: poll before halting, lower wake-up latency in a VM",
       "cpuidle_haltpoll"),
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
    _f("BLK_DEV_NVME", BOOT, "NVMe disks (mini-PCs, cloud instances)", "nvme"),
    _f("SATA_AHCI", BOOT, "SATA disks (mini-PCs)", "ahci"),
    _f("USB_XHCI_HCD", BOOT, "USB 3 host (boot from a USB stick)", "xhci_hcd"),
    _f("USB_STORAGE", BOOT, "USB sticks as the boot disk", "usb_storage"),
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
    # --- console ------------------------------------------------------------
    _f("SERIAL_8250", CONSOLE, "serial console (VPS consoles, headless mini-PCs)"),
    _f("SERIAL_8250_CONSOLE", CONSOLE, "kernel messages on ttyS0"),
    _f("FB", CONSOLE, "framebuffer: the console UI on UEFI machines without VGA text mode"),
    _f("FB_EFI", CONSOLE, "EFI GOP framebuffer"),
    _f("FRAMEBUFFER_CONSOLE", CONSOLE, "tty1 on the framebuffer"),
    # --- mini-PC NICs -------------------------------------------------------
    _f("NET_VENDOR_INTEL", NIC, "Intel NIC drivers menu"),
    _f("IGC", NIC, "Intel I225/I226 2.5 GbE (most router mini-PCs)", "igc"),
    _f("IGB", NIC, "Intel I210/I211/I350 GbE", "igb"),
    _f("E1000E", NIC, "Intel I219 and 8257x GbE", "e1000e"),
    _f("NET_VENDOR_REALTEK", NIC, "Realtek NIC drivers menu"),
    _f("R8169", NIC, "Realtek RTL8111/8125 (1 and 2.5 GbE)", "r8169"),
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
    this is the proof that it did not happen.
    """
    final = parse_kconfig(config_text)
    problems = []
    for symbol, want in parse_kconfig(fragment_text).items():
        got = final.get(symbol, "n")
        if got != want:
            why = BY_SYMBOL[symbol].why if symbol in BY_SYMBOL else "set by the fragment"
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


def doctor_modules(features: tuple[Feature, ...] = FEATURES) -> tuple[str, ...]:
    """The module names keel doctor checks."""
    return tuple(f.module for f in features if f.doctor and f.module)


def render_fragment(features: tuple[Feature, ...] = FEATURES) -> str:
    """The fragment the list asks for, grouped by area with the reasons as comments."""
    lines = ["# keel release kernel: config fragment over x86_64_defconfig.",
             "# Generated from and checked against tui/keel/kernel_features.py."]
    area = None
    for f in features:
        if f.area != area:
            area = f.area
            lines += ["", f"# --- {area}"]
        lines.append(f"# {f.why}")
        lines.append(f"CONFIG_{f.symbol}={f.value}")
    return "\n".join(lines) + "\n"
