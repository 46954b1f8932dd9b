"""The metrics endpoint in the plan (keel.apply.metrics): `keel
metrics-serve` started with the LAN's and the tunnel's addresses (every
address with on_wan), once; restarted when its command line changes;
stopped when [metrics] is off. And a boot fallback never turns it on, or
onto the WAN, where the newer config does not (keel.apply.narrow)."""

from __future__ import annotations

from dataclasses import replace

from keel.apply import metrics as plan
from keel.apply import narrow
from keel.config.dump import to_toml
from keel.config.load import parse_config
from keel.model import Lan, Metrics, RouterModel, Wan, WireGuard
from tests.unit.apply.fake_router import fake_router
from tests.unit.apply.test_apply_plan import FakeProbe, whys
from tests.unit.apply.test_boot import DEFAULT

EDGE = RouterModel(wans=(Wan("eth0"),),
                   lans=(Lan("eth1", "192.168.77.1/24", address6="2001:db8:1::1/64"),),
                   wireguard=WireGuard(address=("10.77.0.2/24", "fd77::2/64")),
                   metrics=Metrics(enabled=True))
OFF = replace(EDGE, metrics=Metrics())


class MetricsProbe(FakeProbe):
    """The endpoint's pidfile alive or not, and its stamp."""

    def pid_alive(self, pidfile: str) -> bool:
        return self.holding and pidfile.endswith(plan.PIDFILE)


def server_argv(step) -> tuple[str, ...]:
    (cmd,) = step.commands
    return cmd[cmd.index("--") + 1:]


def test_it_starts_on_the_lans_and_the_tunnels_addresses(tmp_path):
    (start,) = plan.plan_metrics(EDGE, MetricsProbe(tmp_path))
    assert start.component == "metrics"
    assert start.why == ("metrics for Prometheus on 192.168.77.1, 2001:db8:1::1, 10.77.0.2, "
                         "fd77::2, port 9586")
    (cmd,) = start.commands
    assert cmd[:7] == ("start-stop-daemon", "-S", "-b", "-m", "-p",
                       str(tmp_path / "metrics.pid"), "-x")
    assert server_argv(start) == (
        "-m", "keel.cli", "metrics-serve", "--port", "9586", "--listen", "192.168.77.1",
        "--listen", "2001:db8:1::1", "--listen", "10.77.0.2", "--listen", "fd77::2")
    ((path, digest),) = start.stamps
    assert path == str(tmp_path / "state" / "metrics") and len(digest.strip()) == 64


def test_on_wan_listens_on_every_address_and_the_port_is_its_own(tmp_path):
    model = replace(EDGE, metrics=Metrics(enabled=True, port=9100, on_wan=True))
    (start,) = plan.plan_metrics(model, MetricsProbe(tmp_path))
    assert server_argv(start)[3:] == ("--port", "9100", "--listen", "0.0.0.0", "--listen", "::")
    assert start.why == "metrics for Prometheus on 0.0.0.0, ::, port 9100"


def test_a_hub_without_a_lan_listens_on_its_tunnel_alone(tmp_path):
    hub = RouterModel(wans=(Wan("eth0"),), wireguard=WireGuard(address=("10.77.0.1/24",)),
                      metrics=Metrics(enabled=True))
    assert plan.listen_addresses(hub) == ["10.77.0.1"]
    nowhere = RouterModel(wans=(Wan("eth0"),), metrics=Metrics(enabled=True))
    assert plan.metrics_argv(nowhere) is None  # the loader refuses it; the plan starts nothing
    assert plan.plan_metrics(nowhere, MetricsProbe(tmp_path)) == []


def test_it_runs_once_restarts_on_change_and_stops_when_off(tmp_path):
    (start,) = plan.plan_metrics(EDGE, MetricsProbe(tmp_path))
    digest = start.stamps[0][1].strip()
    running = MetricsProbe(tmp_path, holding=True, stamps={"metrics": digest})
    assert plan.plan_metrics(EDGE, running) == []
    moved = replace(EDGE, metrics=Metrics(enabled=True, port=9100))
    assert whys(plan.plan_metrics(moved, running)) == [
        "metrics for Prometheus: restarted",
        "metrics for Prometheus on 192.168.77.1, 2001:db8:1::1, 10.77.0.2, fd77::2, port 9100"]
    new_lan = replace(EDGE, lans=(Lan("eth1", "192.168.78.1/24"),))
    assert whys(plan.plan_metrics(new_lan, running))[0] == "metrics for Prometheus: restarted"
    (stop,) = plan.plan_metrics(OFF, running)
    assert stop.why == "metrics for Prometheus off" and stop.action is not None
    assert plan.plan_metrics(OFF, MetricsProbe(tmp_path)) == []


def test_a_boot_with_metrics_on_starts_it_after_the_ruleset():
    """The whole `keel apply --boot` on a router that touches nothing: the
    ruleset goes in, then the endpoint starts on the LAN's address."""
    with fake_router(config(True, False)) as router:
        assert router.boot() == 0
        ran = router.ran()
        (start,) = [i for i, argv in enumerate(ran) if "metrics-serve" in argv]
        assert ran[start][-4:] == ["--port", "9586", "--listen", "192.168.77.1"]
        loaded = max(i for i, argv in enumerate(ran) if argv[:2] == ["nft", "-f"])
        assert loaded < start


def test_the_step_shows_no_secret(tmp_path):
    (start,) = plan.plan_metrics(EDGE, MetricsProbe(tmp_path))
    assert start.files == () and "private" not in " ".join(start.describe()).lower()


# --- a boot fallback never widens it --------------------------------------------------
def config(enabled: bool, on_wan: bool) -> str:
    return (DEFAULT + f"\n[metrics]\nenabled = {str(enabled).lower()}\n"
            f"on_wan = {str(on_wan).lower()}\n")


def narrowed(older: tuple[bool, bool], newer_text: str) -> tuple[tuple[bool, bool], tuple]:
    cfg = parse_config(config(*older)).config
    ceiling = narrow.ceiling_of(newer_text)
    assert ceiling is not None
    cut, said = narrow.narrow(cfg, ceiling)
    parse_config(to_toml(cut))  # the cut config is still a valid one
    return (cut.metrics.enabled, cut.metrics.on_wan), said


def test_a_fallback_keeps_the_metrics_only_where_the_newer_config_has_them():
    assert narrowed((True, True), config(True, True)) == ((True, True), ())
    assert narrowed((True, True), config(True, False)) == ((True, False), ("metrics.on_wan",))
    assert narrowed((True, True), config(False, False)) == (
        (False, False), ("metrics.enabled", "metrics.on_wan"))
    assert narrowed((True, False), DEFAULT) == ((False, False), ("metrics.enabled",))
    # a newer file that is TOML but no valid config: on_wan goes with enabled
    assert narrowed((True, True), config(False, True)) == ((False, False), ("metrics.enabled",))
    assert narrowed((False, False), config(True, True)) == ((False, False), ())
