"""Doctor checks of IPv6 (pure): dhcpcd running for a WAN on ipv6 = auto,
the WAN's global address and default route (from the provider's router
advertisements), each delegated LAN's /64 (dhcpcd's), each LAN's static
address6 (keel's). What the provider has not given yet is a warning, not
a failure: keel cannot make it so; what keel should have set and has not
is a failure."""

from __future__ import annotations

from keel.doctor.checks import FAIL, INFO, OK, WARN, Check
from keel.model import RouterModel
from keel.render import dhcpcd
from keel.system.ipv6 import Address6


def _left(a: Address6) -> str:
    return "static" if a.static else f"valid {a.valid_s} s"


def check_ipv6(model: RouterModel, addresses: dict[str, tuple[Address6, ...]],
               default6: tuple[str, str] | None, dhcpcd_running: bool) -> list[Check]:
    found = []
    delegated = dict(dhcpcd.delegated_lans(model))
    for wan in model.wans:
        if wan.ipv6 != "auto":
            continue
        if dhcpcd_running:
            found.append(Check("ipv6", "dhcpcd", OK,
                               f"running: asks for a /{wan.ipv6_pd_length} on {wan.interface}"))
        else:
            found.append(Check("ipv6", "dhcpcd", FAIL,
                               "not running: no prefix is asked for (keel apply starts it)"))
        slaac = [a for a in addresses.get(wan.interface, ()) if not a.static]
        route = (f"; default route via {default6[0]}" if default6 and default6[1] == wan.interface
                 else "; no IPv6 default route by it yet")
        if slaac:
            found.append(Check("ipv6", wan.interface, OK if "via" in route else WARN,
                               ", ".join(f"{a.address} ({_left(a)})" for a in slaac) + route,
                               {"addresses": [a.address for a in slaac]}))
        else:
            found.append(Check("ipv6", wan.interface, WARN,
                               "no global IPv6 address yet (no router advertisement with a "
                               "prefix from the provider)" + route))
        if wan is dhcpcd.delegating_wan(model) and not delegated:
            found.append(Check("ipv6", "delegated prefix", INFO,
                               "asked for; no LAN takes a /64 of it (lan.ipv6_from_wan)"))
    for lan in model.lans:
        have = addresses.get(lan.interface, ())
        if lan.address6:
            if any(a.address == lan.address6 for a in have):
                found.append(Check("ipv6", lan.interface, OK, f"{lan.address6} (static)"))
            else:
                found.append(Check("ipv6", lan.interface, FAIL,
                                   f"{lan.address6} is not on it (keel apply puts it there)"))
        if lan in delegated:
            given = [a for a in have if not a.static]
            if given:
                found.append(Check("ipv6", f"{lan.interface} delegated", OK,
                                   ", ".join(f"{a.address} ({_left(a)})" for a in given),
                                   {"addresses": [a.address for a in given]}))
            else:
                found.append(Check("ipv6", f"{lan.interface} delegated", WARN,
                                   "no /64 of a delegated prefix yet (the provider has not "
                                   "delegated one to dhcpcd)"))
    return found
