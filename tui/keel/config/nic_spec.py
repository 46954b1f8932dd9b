"""What `wan.interface` and `lan.interface` may say: a kernel name as today
("eth0", "enp1s0", "br-lan"), or what the NIC is, which no reboot, other
image or driver order changes: `mac:52:54:00:12:34:56` (its permanent MAC,
what `ethtool -P` prints) or `pci:0000:01:00.0` (its PCI function, as
lspci -D prints it; lspci's short `01:00.0` is read as domain 0000).

Pure and strict: the prefix in lower case, a MAC of six pairs of hex digits
(any case, kept in lower case), a PCI address as sysfs names it. A kernel
name is keel.config.checks.ifname's; it has no ':' so it never looks like
either of the others."""

from __future__ import annotations

from dataclasses import dataclass

from keel.parse.nic_identity import mac, pci_name

NAME, MAC, PCI = "name", "mac", "pci"
EXAMPLES = 'a kernel name like "eth0", "mac:52:54:00:12:34:56" or "pci:0000:01:00.0"'
SPEC_MAX = 64  # characters: "pci:" + the longest PCI address, with room


@dataclass(frozen=True)
class NicSpec:
    kind: str  # NAME, MAC or PCI
    value: str  # the name, the MAC in lower case, the PCI address as sysfs has it

    @property
    def text(self) -> str:
        """As a config writes it, canonical: two specs of one NIC are equal."""
        return self.value if self.kind == NAME else f"{self.kind}:{self.value}"

    @property
    def by_identity(self) -> bool:
        return self.kind != NAME


def parse_spec(text: str, ifname_problem: object = None) -> NicSpec:
    """The spec, or ValueError saying why it is none (never repeating the
    text). `ifname_problem` judges a kernel name (keel.config.checks.ifname;
    passed in, so this module needs no checks of its own for it)."""
    if len(text) > SPEC_MAX:
        raise ValueError(f"not a NIC: longer than {SPEC_MAX} characters")
    kind, colon, rest = text.partition(":")
    if not colon or kind not in (MAC, PCI):
        reason = ifname_problem(text) if callable(ifname_problem) else None
        if reason or colon:
            raise ValueError(f"{reason or 'not an interface name'} (or name the NIC by what "
                             f"it is: {EXAMPLES})")
        return NicSpec(NAME, text)
    if kind == MAC:
        found = mac(rest)
        if found is None or rest != rest.strip():
            raise ValueError("mac: not a MAC address: six pairs of hex digits joined by ':', "
                             "like 52:54:00:12:34:56 (not all zeros)")
        return NicSpec(MAC, found)
    found = pci_name(rest)
    if found is None or rest != rest.strip():
        raise ValueError("pci: not a PCI address: domain:bus:device.function as "
                         "`lspci -D` prints it, like 0000:01:00.0")
    return NicSpec(PCI, found)
