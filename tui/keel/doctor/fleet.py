"""Doctor checks of the fleet's daemons: the edge's `keel fleet agent` runs
exactly when the config names a hub, the hub's `keel fleet watch` exactly
when it has edges (keel.apply.fleet). Pure."""

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


def check_fleet_watch(model: RouterModel, running: bool) -> Check | None:
    """None on a router without edges where nothing runs (nothing to say)."""
    edges = model.wireguard is not None and any(p.fleet == "edge" for p in model.wireguard.peer)
    data = {"edges": edges, "running": running}
    if not edges:
        return Check("fleet", "watch", WARN, "runs though this router has no edges "
                                             "(keel apply stops it)", data) if running else None
    if not running:
        return Check("fleet", "watch", FAIL, "this hub has edges, but nothing asks them "
                                             "(keel apply starts keel fleet watch; its log: "
                                             "/run/keel/fleet-watch.log)", data)
    return Check("fleet", "watch", OK, "asks the edges every 30 s, gives one behind its routes",
                 data)
