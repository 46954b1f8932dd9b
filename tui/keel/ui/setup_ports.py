"""The setup wizard's ports (no Textual): which port each answer names, the
answers' defaults on the ports found, what keeps the port step from going
on, and how the review names them.

An answer is the text the config gets: a port chosen in the wizard is named
by what it is (keel.parse.nic_identity.Port.identity: `mac:` and its
permanent MAC, else `pci:`), which no reboot, other image or driver order
changes; `keel apply` resolves it (keel.model.nic_roles), and so does this,
to show the kernel name it is today. The rules:

- the WAN starts on the port the config in force names (where keel found
  it first, keel.system.nic_record, when the config names it by a kernel
  name that has since moved), else the first with a link, else the first;
- the LAN is never guessed where there is a choice: it starts on the port
  the config in force names only when the user wrote that config (not the
  shipped default on first boot), else on the one other port of a
  two-port machine (shown as the LAN; [enter] takes it), else on none: the
  user picks it;
- a one-port machine is offered the hub role: an edge needs a second port
  for its LAN;
- an edge goes on only with its LAN on a port listed (or the LAN its own
  config names, a bridge say): keel never serves DHCP on a port the user
  did not assign."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from keel.model.nic_roles import resolve
from keel.parse.nic_first_seen import FirstSeen
from keel.parse.nic_identity import Port

ONE_PORT = "an edge needs a second port for its LAN"


def spec_of(port: Port) -> str:
    """What the config names this port by: its identity, else its name."""
    return port.identity or port.name


def port_named(spec: str, ports: Sequence[Port]) -> Port | None:
    """The port this answer names (a kernel name, `mac:` or `pci:`), as
    `keel apply` resolves it; None: none here, or more than one."""
    if not spec:
        return None
    found = resolve("", "", spec, ports, [p.name for p in ports]).name
    return next((p for p in ports if p.name == found), None)


def first_found(spec: str, key: str, first_seen: Mapping[str, FirstSeen],
                ports: Sequence[Port]) -> str:
    """The identity of the port `key` ("wan.interface") was first found on,
    where the config still says what it said then and that port is here;
    else the spec as it is."""
    entry = first_seen.get(key)
    if entry is None or entry.spec != spec or port_named(entry.identity, ports) is None:
        return spec
    return entry.identity


def default_role(role: str, ports: Sequence[Port]) -> str:
    """The hub for a machine with one port (an edge has no LAN there)."""
    return "hub" if len(ports) == 1 else role


def role_note(ports: Sequence[Port]) -> str:
    """Why the role step offers what it offers ("" when there is nothing to say)."""
    if len(ports) == 1:
        return (f"one port found ({ports[0].name}): the hub role is offered, as {ONE_PORT} "
                "(plug one in, and the port step lists it)")
    if not ports:
        return "no port found yet: the port step lists them as they appear"
    return ""


def with_defaults(wan: str, lan: str, role: str, ports: Sequence[Port],
                  kept: Sequence[str] = ()) -> tuple[str, str]:
    """The WAN's and the LAN's answers on these ports (see the module's
    rules): an answer on a port here stays on it (named by identity), one
    in `kept` (the specs of the user's own config: none on first boot)
    stays as it is; the rest get their defaults."""
    if not ports:
        return wan, lan if lan in kept else ""
    on_wan = port_named(wan, ports)
    if on_wan is None and wan in kept:
        wan_out, wan_name = wan, ""
    else:
        on_wan = on_wan or next((p for p in ports if p.carrier), ports[0])
        wan_out, wan_name = spec_of(on_wan), on_wan.name
    if role != "edge":
        return wan_out, ""
    on_lan = port_named(lan, ports)
    if on_lan is not None and on_lan.name != wan_name:
        return wan_out, spec_of(on_lan)
    if on_lan is None and lan and lan in kept:
        return wan_out, lan  # a bridge, a VLAN: as the user's config says
    others = [p for p in ports if p.name != wan_name]
    return wan_out, spec_of(others[0]) if len(others) == 1 else ""


def pick(wan: str, lan: str, which: str, port: Port, ports: Sequence[Port]) -> tuple[str, str]:
    """This port as the WAN ("wan") or the LAN ("lan"); taking the other's
    port swaps them."""
    spec = spec_of(port)
    mine, other = (wan, lan) if which == "wan" else (lan, wan)
    on_other = port_named(other, ports)
    if on_other is not None and on_other.name == port.name:
        other = mine
    return (spec, other) if which == "wan" else (other, spec)


def use(wan: str, lan: str, role: str, port: Port, ports: Sequence[Port]) -> str:
    """"WAN", "LAN" or "" for this port's row."""
    for spec, label in ((wan, "WAN"), (lan if role == "edge" else "", "LAN")):
        found = port_named(spec, ports)
        if found is not None and found.name == port.name:
            return label
    return ""


def problems(wan: str, lan: str, role: str, ports: Sequence[Port],
             kept: Sequence[str] = ()) -> dict[str, str]:
    """What keeps the port step from going on: answer name -> one line."""
    out = {}
    hint = "[w] on its row, or [f] to find it by its cable"
    if not wan:
        out["wan_interface"] = f"WAN: no port chosen: {hint}"
    elif port_named(wan, ports) is None and wan not in kept:
        out["wan_interface"] = f"WAN {wan}: on no port here: {hint}"
    if role != "edge":
        return out
    hint = "[l] on its row, or [g] to find it by its cable"
    if len(ports) < 2 and lan not in kept:
        out["lan_interface"] = (f"LAN: {ONE_PORT}: plug one in (the list follows), or "
                                "[esc] back to choose the hub role")
    elif not lan:
        out["lan_interface"] = f"LAN: no port chosen: {hint}"
    elif port_named(lan, ports) is None and lan not in kept:
        out["lan_interface"] = f"LAN {lan}: on no port here: {hint}"
    else:
        on_wan, on_lan = port_named(wan, ports), port_named(lan, ports)
        if on_lan is not None and on_wan is not None and on_lan.name == on_wan.name:
            out["lan_interface"] = f"LAN: {on_lan.name} is the WAN: {hint}"
    return out


def today(spec: str, ports: Sequence[Port]) -> str:
    """The spec with the kernel name it is today: "mac:52:54:00:12:34:02,
    ens4 today"; the name alone when the spec is one."""
    port = port_named(spec, ports)
    if not spec:
        return "?"
    if port is None or port.name == spec:
        return spec
    return f"{spec}, {port.name} today"
