"""Plan the fleet's daemons (keel.apply.engine.plan calls it). The edge's
side: on a router whose config names a hub (a peer with fleet = "hub") and
has a tunnel address of the hub's family, `keel fleet agent` runs as a daemon
(pidfile PIDFILE in the run directory) answering that hub only; restarted
when its command line changes, stopped when there is no hub. The ruleset
opens its port from the hub's tunnel address on the tunnel only
(keel.render.nft). The hub's side: on a router with edges (peers with fleet
= "edge"), `keel fleet watch` (keel.fleet.watch) asks them every 30 s."""

from __future__ import annotations

import sys

from keel.apply.probe import Probe
from keel.apply.steps import Step, plan_daemon, stop_daemon
from keel.model import RouterModel
from keel.ports import FLEET_TCP
from keel.render.wireguard import fleet_addresses

PIDFILE = "fleet-agent.pid"
STAMP = "fleet-agent"  # the sha256 of the running command line (probe.stamp)


def agent_argv(model: RouterModel) -> list[str] | None:
    found = fleet_addresses(model)
    if found is None or model.wireguard is None:
        return None
    hub, own = found
    return [sys.executable, "-m", "keel.cli", "fleet", "agent", "--listen", own, "--hub", hub,
            "--device", model.wireguard.interface, "--port", str(FLEET_TCP)]


def plan_fleet_agent(model: RouterModel, probe: Probe) -> list[Step]:
    argv = agent_argv(model)
    found = fleet_addresses(model)
    hub, own = found if found else ("", "")
    return plan_daemon("fleet", probe, PIDFILE, STAMP, argv, "fleet channel",
                       f": answering the hub {hub} on {own}, port {FLEET_TCP}",
                       "fleet channel off (no hub)")


WATCH_PIDFILE = "fleet-watch.pid"
WATCH_ARGV = ("-m", "keel.cli", "fleet", "watch")  # keel.fleet.background finds it so


def plan_fleet_watch(model: RouterModel, probe: Probe) -> list[Step]:
    """`keel fleet watch` runs exactly while the config has edges."""
    pidfile = str(probe.run_dir / WATCH_PIDFILE)
    running = probe.pid_alive(pidfile)
    edges = model.wireguard is not None and any(p.fleet == "edge"
                                                for p in model.wireguard.peer)
    if not edges:
        return [stop_daemon("fleet", "fleet watch off (no edges)", pidfile)] if running else []
    if running:
        return []
    return [Step("fleet", "fleet watch: asking the edges every 30 s",
                 (("start-stop-daemon", "-S", "-b", "-m", "-p", pidfile,
                   "-x", sys.executable, "--", *WATCH_ARGV),))]
