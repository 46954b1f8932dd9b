"""Plan the metrics endpoint (keel.apply.engine.plan calls it): `keel
metrics-serve` runs as a daemon (pidfile PIDFILE in the run directory) with
this model's addresses and port while [metrics] is enabled, is restarted when
its command line changes, and is stopped when it is not. The ruleset opens
its port (keel.render.nft); this starts and stops the process."""

from __future__ import annotations

import ipaddress
import sys

from keel.apply.probe import Probe
from keel.apply.steps import Step, plan_daemon
from keel.model import RouterModel

PIDFILE = "metrics.pid"
STAMP = "metrics"  # the sha256 of the running command line (probe.stamp)
EVERY_ADDRESS = ("0.0.0.0", "::")


def listen_addresses(model: RouterModel) -> list[str]:
    """Where it listens: the LANs' addresses (IPv4 and the static IPv6) and
    the tunnel's; every address with on_wan (the ruleset decides who
    reaches it: the WAN's may come by DHCP and SLAAC, and change)."""
    if model.metrics.on_wan:
        return list(EVERY_ADDRESS)
    texts = []
    for lan in model.lans:
        texts += [lan.address] + ([lan.address6] if lan.address6 else [])
    texts += list(model.wireguard.address) if model.wireguard else []
    found = [str(ipaddress.ip_interface(text).ip) for text in texts]
    return list(dict.fromkeys(found))


def metrics_argv(model: RouterModel) -> list[str] | None:
    """The server's command line for this model; None: off (or nowhere to
    listen, which the loader refuses)."""
    if not model.metrics.enabled:
        return None
    addresses = listen_addresses(model)
    if not addresses:
        return None
    argv = [sys.executable, "-m", "keel.cli", "metrics-serve", "--port", str(model.metrics.port)]
    for address in addresses:
        argv += ["--listen", address]
    return argv


def plan_metrics(model: RouterModel, probe: Probe) -> list[Step]:
    """The endpoint runs with this model's command line, or not at all."""
    argv = metrics_argv(model)
    where = ", ".join(argv[argv.index("--listen") + 1::2]) if argv else ""
    return plan_daemon("metrics", probe, PIDFILE, STAMP, argv, "metrics for Prometheus",
                       f" on {where}, port {model.metrics.port}", "metrics for Prometheus off")
