"""Doctor check of the fleet channel's edge side: `keel fleet agent` runs
exactly when the config names a hub (keel.apply.fleet). Pure."""

from __future__ import annotations

from keel.doctor.checks import FAIL, INFO, OK, WARN, Check
from keel.model import RouterModel
from keel.ports import FLEET_TCP
from keel.render.wireguard import fleet_addresses


def check_fleet_agent(model: RouterModel, running: bool) -> Check:
    found = fleet_addresses(model)
    data = {"hub": found[0] if found else None, "listen": found[1] if found else None,
            "running": running}
    if found is None:
        if running:
            return Check("fleet", "agent", WARN, "runs though no peer is this router's hub "
                                                 "(keel apply stops it)", data)
        return Check("fleet", "agent", INFO, "no hub (no peer with fleet = \"hub\")", data)
    hub, own = found
    if not running:
        return Check("fleet", "agent", FAIL, f"the hub {hub} is configured, but nothing "
                                             f"answers it on {own}:{FLEET_TCP} "
                                             "(keel apply starts it; its log: "
                                             "/run/keel/fleet-agent.log)", data)
    return Check("fleet", "agent", OK, f"answers the hub {hub} on {own}:{FLEET_TCP}", data)
