"""`keel doctor [--json]` and `keel doctor --watch SECONDS [--json]`."""

from __future__ import annotations

import argparse
import json
import sys
import time

from keel.doctor import checks, collect
from keel.model import Tuning
from keel.system.commands import Runner
from keel.system.kernel import kernel_feature_presence

SYMBOL = {checks.OK: "ok  ", checks.INFO: "info", checks.WARN: "WARN", checks.FAIL: "FAIL"}


def run_doctor(as_json: bool, seconds: float) -> int:
    from keel.access.password import PasswordStore
    from keel.apply import boot, engine
    from keel.apply import ipv6 as ipv6_plan
    from keel.apply.metrics import listen_addresses
    from keel.doctor import hardware
    from keel.doctor import history as history_checks
    from keel.doctor import ipv6 as ipv6_checks
    from keel.doctor.fleet import check_fleet_agent, check_fleet_watch
    from keel.history.daemon import BATCH_S
    from keel.history.sampler import INTERVAL_S
    from keel.model import InvalidConfig, config_in_force, read_model
    from keel.system import ipv6 as ipv6_state

    runner = Runner()
    found: list[checks.Check] = []
    model = None
    source = config_in_force()
    try:
        model = read_model(source)
    except InvalidConfig as err:
        found.append(checks.Check("config", str(source), checks.FAIL, err.summary(),
                                  {"problems": err.error.lines()}))
    found += checks.check_boot(boot.read_record(engine.RUN_DIR))
    found += checks.check_kernel(kernel_feature_presence())
    found += hardware.check_devices(collect.devices())
    found += hardware.check_secure_boot(collect.secure_boot())
    if model is not None:
        resolution = collect.roles(model)
        model = resolution.model  # kernel names, as keel apply resolves them
        found += hardware.check_roles(resolution, collect.ports(), collect.first_seen())
        found += hardware.check_links(model, collect.links(model))
    found += checks.check_upgrade(collect.upgrade())
    found += checks.check_password(PasswordStore().root_hash())
    found.append(history_checks.check_history(collect.history(), time.time(),
                                              INTERVAL_S, BATCH_S))
    if model is not None:
        found.append(history_checks.check_metrics(model, collect.metrics(engine.RUN_DIR),
                                                  listen_addresses(model)))
        found.append(check_fleet_agent(model, collect.fleet_agent(engine.RUN_DIR)))
        if watch := check_fleet_watch(model, collect.fleet_watch(engine.RUN_DIR)):
            found.append(watch)
    asked = model.tuning if model is not None else Tuning()
    found += checks.check_tuning(collect.tuning(), asked.governor,
                                 asked.max_cstate_latency_us if asked.hold_latency else None)
    found.append(checks.check_steal(collect.steal_over(seconds), seconds))
    if model is not None:
        found += checks.check_shaping(model, collect.qdiscs(runner))
        found += checks.check_tunnel(model, collect.wireguard(runner), time.time())
        found += checks.check_mtu(model, collect.mtus(runner))
        found += checks.check_firewall(collect.ruleset(model, runner, engine.RUN_DIR))
        found += ipv6_checks.check_ipv6(model, ipv6_state.read_addresses6(runner),
                                        ipv6_state.read_default6(runner),
                                        ipv6_state.daemon_running(
                                            engine.RUN_DIR / ipv6_plan.DHCPCD_PID))
    status = checks.exit_status(found)
    if as_json:
        print(json.dumps({"status": "fail" if status else "ok",
                          "checks": [c.as_dict() for c in found]}, indent=1))
    else:
        print("\n".join(lines(found)))
        print("all that the config asks for is in force" if status == 0
              else "something the config asks for is NOT in force")
    return status


def lines(found: list[checks.Check]) -> list[str]:
    """What `keel doctor` prints of its checks: each area once, then its checks."""
    out, area = [], ""
    for c in found:
        if c.area != area:
            area = c.area
            out.append(f"{area}:")
        out.append(f"  [{SYMBOL[c.status]}] {c.name}: {c.detail}")
    return out


def run_boot(as_json: bool) -> int:
    """The boot timeline: where the time went, and when the router routed."""
    from keel.boot import timeline
    from keel.doctor import boot as boot_view

    marks = timeline.read()
    if as_json:
        print(json.dumps(boot_view.as_dict(marks), indent=1))
    else:
        print("\n".join(boot_view.lines(marks)))
    return 0 if marks else 1


def run_watch(as_json: bool, seconds: float) -> int:
    """What limits latency now, each second; 1 when the last verdict is bad."""
    from keel.doctor.watch import watch
    from keel.metrics.live import real_collectors

    last = watch(real_collectors(), seconds, sys.stdout, as_json)
    worst = last.worst if last is not None else None
    return 1 if worst is not None and worst.severity == "bad" else 0


def _watch_seconds(text: str) -> float:
    value = float(text)
    if not 1 <= value <= 86400:
        raise argparse.ArgumentTypeError("watch 1..86400 seconds")
    return value


def add_doctor_command(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("doctor", help="check what is really in force; --watch: what "
                                      "limits latency now")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument("--seconds", type=float, default=2.0,
                   help="how long to watch CPU steal time (default 2)")
    p.add_argument("--watch", type=_watch_seconds, metavar="SECONDS",
                   help="name what limits latency, once a second for SECONDS "
                        "(stall meter, steal, tunnel CPU, latency, CAKE, clock)")
    p.add_argument("--boot", action="store_true",
                   help="where the boot's time went (/run/keel/boot.jsonl), and when "
                        "the router routed")
    p.set_defaults(func=lambda args: run_boot(args.json) if args.boot
                   else run_watch(args.json, args.watch) if args.watch
                   else run_doctor(args.json, args.seconds))


if __name__ == "__main__":
    sys.exit(run_doctor("--json" in sys.argv, 2.0))
