"""Doctor checks of the hardware (pure): a network or storage device that no
driver took, named as `ip` and lspci users know it; Secure Boot on, which
keel's unsigned GRUB cannot pass; and the NICs the config assigns (the
WAN's and the LAN's interface): not on this machine, administratively down,
or without a link. Each is a warning: keel routes what it can without it
(`keel apply` skips a NIC that is not there), and a one-NIC VPS still on
the shipped default names a LAN port it does not have; the line says what
is not in force."""

from __future__ import annotations

from keel.doctor.checks import INFO, OK, WARN, Check
from keel.model import RouterModel
from keel.model.nic_roles import Resolution
from keel.parse.hardware import NETWORK, STORAGE, Device, Link
from keel.parse.nic_first_seen import FirstSeen
from keel.parse.nic_identity import Port
from keel.shown import shown

AREA = "hardware"


def check_devices(devices: list[Device]) -> list[Check]:
    """One warning per network or storage device that no driver took; when
    a driver took each, one line that says how many there are."""
    missing = [d for d in devices if not d.driver]
    found = [Check(AREA, d.label, WARN,
                   "no driver in this kernel" + (f" (its driver: {d.module})" if d.module else ""),
                   d.as_dict()) for d in missing]
    if not devices:
        found.append(Check(AREA, "drivers", INFO,
                           "no network or storage device seen on PCI, USB, Hyper-V's VM bus "
                           "or virtio"))
    elif not missing:
        net = sum(d.kind == NETWORK for d in devices)
        disks = sum(d.kind == STORAGE for d in devices)
        found.append(Check(AREA, "drivers", OK,
                           f"a driver took each network and storage device ({net} network, "
                           f"{disks} storage)", {"network": net, "storage": disks}))
    return found


def check_secure_boot(state: str | None) -> list[Check]:
    """The firmware's Secure Boot: nothing when it is not known to have one
    (not booted by UEFI, or no efivarfs)."""
    if state is None:
        return []
    if state == "on":
        return [Check(AREA, "secure boot", WARN,
                      "on: keel's GRUB is not signed, so a firmware that enforces Secure Boot "
                      "will not start it: turn Secure Boot off in the firmware setup")]
    if state == "off":
        return [Check(AREA, "secure boot", OK, "off (keel's GRUB is not signed)")]
    return [Check(AREA, "secure boot", INFO,
                  "unknown: the firmware's SecureBoot variable is not what UEFI defines "
                  "(4 bytes of attributes, 1 of value: 0 or 1)")]


def check_links(model: RouterModel, links: dict[str, Link]) -> list[Check]:
    """Each NIC the config assigns, as `ip link` would show it."""
    assigned = [(w.interface, "WAN", "wan.interface") for w in model.wans]
    assigned += [(lan.interface, "LAN", "lan.interface") for lan in model.lans]
    found = []
    for ifname, role, key in assigned:
        name = f"{shown(ifname, 20)} ({role})"
        state = links.get(ifname, Link(False))
        data = {"interface": ifname, "role": role, "present": state.present, "up": state.up,
                "carrier": state.carrier, "operstate": state.operstate}
        if not state.present:
            found.append(Check(AREA, name, WARN,
                               f"not on this machine: ip link shows no {shown(ifname, 20)}, "
                               f"which the config's {key} names", data))
        elif state.up is False:
            found.append(Check(AREA, name, WARN,
                               "administratively down (state DOWN, no UP flag in ip link): "
                               "keel apply sets it up", data))
        elif state.carrier is False:
            found.append(Check(AREA, name, WARN,
                               "up, but NO-CARRIER: no link (is the cable in, and the other "
                               "end on?)", data))
        elif state.up is None or state.carrier is None:
            found.append(Check(AREA, name, INFO,
                               f"link not readable (operstate {state.operstate or 'unknown'})",
                               data))
        else:
            found.append(Check(AREA, name, OK, "up, with carrier", data))
    return found


def check_roles(resolution: Resolution, ports: list[Port],
                first_seen: dict[str, FirstSeen]) -> list[Check]:
    """Which kernel name each role resolved to (`keel apply` resolves the
    same way); a LAN left out (no LAN service), a WAN keel apply refuses;
    and a kernel name that is now another NIC than the one the first apply
    of this config found there (the kernel's names moved: another image, a
    new driver, a NIC added)."""
    found = []
    by_name = {p.name: p for p in ports}
    for role in resolution.roles:
        data = {"key": role.key, "spec": role.spec, "name": role.name, "why": role.why}
        where = f"{role.key} ({role.role})"
        if role.name is None:
            refused = role.role == "WAN" and resolution.refused
            found.append(Check(AREA, where, WARN, f"{role.spec}: {role.why}: " + (
                "keel apply refuses this config" if refused else
                "no LAN service (no DHCP, DNS or router advertisements)"
                if role.role == "LAN" else "not in force"), data))
            continue
        port = by_name.get(role.name)
        what = f"{role.spec} -> {role.name}" if role.name != role.spec else role.name
        if port is not None:
            what += f" ({port.driver or 'no driver'}, {port.identity or 'no identity'})"
            data |= {"identity": port.identity, "driver": port.driver}
        kept = first_seen.get(role.key)
        if kept is not None and kept.spec == role.spec and port is not None \
                and kept.identity != port.identity:
            found.append(Check(AREA, where, WARN,
                               f"{what}: the first apply of this config found "
                               f"{shown(kept.identity, 40)} ({shown(kept.driver, 20)}) as "
                               f"{shown(kept.name, 20)}: the kernel's names moved; name the "
                               f"port by what it is: {role.key} = \"{shown(kept.identity, 40)}\"",
                               data | {"first": kept.identity}))
        else:
            found.append(Check(AREA, where, OK, what, data))
    return found
