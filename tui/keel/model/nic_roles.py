"""The WAN's and the LAN's NIC, as the config names them (a kernel name, or
`mac:`/`pci:`: keel.config.nic_spec), resolved to the kernel names of this
boot: the model the renderers and apply use holds kernel names only.

Pure: the config's model, the ports keel.system.nic_ports read and the
names of every network device in, a Resolution out. The rules:

- a kernel name stays itself; `mac:` is the port whose permanent MAC it is
  (else, where none has it as its own, whose MAC now is); `pci:` the port on
  that PCI function;
- a WAN that names no port here, or two, is refused: nothing is applied
  (`keel apply --boot` falls back to the last good revision, then the
  shipped default);
- a LAN whose NIC is not here, or is ambiguous, is left out: no DHCP, DNS or
  router advertisements anywhere (a one-NIC VPS on the shipped default has
  no eth1; a NIC that appears later under that name is not the user's
  choice until an apply finds it there);
- the WAN and the LAN resolved to one NIC is refused."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from keel.config.nic_spec import MAC, NAME, PCI, NicSpec, parse_spec
from keel.model.router import RouterModel
from keel.parse.nic_identity import Port
from keel.shown import shown


@dataclass(frozen=True)
class Role:
    """One key's NIC: what the config says and the kernel name it is now."""

    key: str  # "wan.interface"
    role: str  # "WAN", "LAN"
    spec: str  # as the config says it (escaped)
    name: str | None  # the kernel name now; None: on no NIC here (or ambiguous)
    why: str = ""  # when name is None, or a word on how it was found

    def line(self) -> str:
        """`WAN  mac:52:54:00:12:34:56 -> eth1` as `keel show ports` prints it."""
        if self.name is None:
            return f"{self.role:<4} {self.spec}: {self.why}"
        if self.name == self.spec:
            return f"{self.role:<4} {self.name}" + (f" ({self.why})" if self.why else "")
        return f"{self.role:<4} {self.spec} -> {self.name}" + (
            f" ({self.why})" if self.why else "")


@dataclass(frozen=True)
class Resolution:
    model: RouterModel  # kernel names only; the LAN left out where its NIC is not here
    roles: tuple[Role, ...]
    refused: str = ""  # why nothing may be applied ("" when it may)
    notes: tuple[str, ...] = ()  # one line each, for the apply's output


def _matches(spec: NicSpec, ports: Sequence[Port]) -> list[Port]:
    if spec.kind == MAC:
        own = [p for p in ports if p.permanent_mac == spec.value]
        return own or [p for p in ports if not p.permanent_mac and p.mac == spec.value]
    if spec.kind == PCI:
        return [p for p in ports if p.pci == spec.value]
    return [p for p in ports if p.name == spec.value]


def resolve(key: str, role: str, text: str, ports: Sequence[Port],
            present: Iterable[str]) -> Role:
    """One key's NIC among the ports (and, for a kernel name, every network
    device present: a bridge or a VLAN can be a LAN)."""
    shown_spec = shown(text, 64)
    try:
        spec = parse_spec(text)
    except ValueError as err:  # a valid config has none: the loader refused it
        return Role(key, role, shown_spec, None, str(err))
    if spec.kind == NAME:
        if spec.value in set(present):
            return Role(key, role, shown_spec, spec.value)
        return Role(key, role, shown_spec, None, "no such NIC on this machine")
    found = _matches(spec, ports)
    if not found:
        what = "permanent MAC or MAC" if spec.kind == MAC else "PCI function"
        return Role(key, role, shown_spec, None, f"no NIC here has this {what}")
    if len(found) > 1:
        names = ", ".join(p.name for p in found)
        hint = " (one PCI function with several ports: name each by its mac:)" \
            if spec.kind == PCI else ""
        return Role(key, role, shown_spec, None, f"more than one NIC is this: {names}{hint}")
    port = found[0]
    how = "by its permanent MAC" if spec.kind == MAC and port.permanent_mac else \
        "by its MAC now (the device has no permanent one)" if spec.kind == MAC else \
        "by its PCI function"
    return Role(key, role, shown_spec, port.name, how)


def resolve_model(model: RouterModel, ports: Sequence[Port],
                  present: Iterable[str]) -> Resolution:
    """The model with kernel names, and each role's resolution."""
    present = set(present) | {p.name for p in ports}
    wan = model.wans[0] if model.wans else None
    roles: list[Role] = []
    refused = ""
    notes: list[str] = []
    wans = []
    for w in model.wans:
        r = resolve("wan.interface", "WAN", w.interface, ports, present)
        roles.append(r)
        if r.name is None and parse_spec_kind(w.interface) != NAME:
            refused = (f"wan.interface {r.spec}: {r.why}; nothing applied (keel show ports "
                       "lists the NICs here)")
        wans.append(dataclasses.replace(w, interface=r.name or w.interface))
    lans = []
    for lan in model.lans:
        r = resolve("lan.interface", "LAN", lan.interface, ports, present)
        roles.append(r)
        if r.name is None:
            notes.append(f"lan.interface {r.spec}: {r.why}: no LAN service (no DHCP, DNS "
                         "or router advertisements) until it is here")
            continue
        if any(r.name == w.interface for w in wans):
            refused = refused or (f"lan.interface {r.spec} and wan.interface "
                                  f"{shown(wan.interface, 64) if wan else ''} are one NIC, "
                                  f"{r.name}; nothing applied")
        lans.append(dataclasses.replace(lan, interface=r.name))
    resolved = dataclasses.replace(model, wans=tuple(wans), lans=tuple(lans))
    return Resolution(resolved, tuple(roles), refused, tuple(notes))


def parse_spec_kind(text: str) -> str:
    """NAME, MAC or PCI; NAME for what is no spec (the loader refused it)."""
    try:
        return parse_spec(text).kind
    except ValueError:
        return NAME
