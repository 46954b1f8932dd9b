"""The tuning plan on a fake probe (it reads nothing but the probe), and the
executor: each step's outcome and the notes its action returned, printed
under the step's line."""

from __future__ import annotations

from pathlib import Path

from keel.apply import engine
from keel.apply.execute import execute
from keel.apply.steps import Step
from keel.model import Lan, RouterModel, Tuning, Wan
from keel.parse.cpusysfs import CpuFreq
from keel.parse.tcqdisc import Qdisc
from keel.system.cpu_sysfs import CpuTuning


class FakeProbe(engine.Probe):
    """A system described by plain values; touching anything else fails."""

    def __init__(self, run_dir: Path, *, governors: tuple[str, ...] = ("performance",),
                 cpus: int = 4, pm_qos: bool = True, holding: bool = False,
                 stamps: dict[str, str] | None = None,
                 rps: dict[str, int | None] | None = None) -> None:
        super().__init__(runner=None, run_dir=run_dir)  # type: ignore[arg-type]
        self.governors, self.cpus, self.pm_qos = governors, cpus, pm_qos
        self.holding, self.stamps, self.rps = holding, stamps or {}, rps or {}

    def cpu_tuning(self) -> CpuTuning:
        freq = {i: CpuFreq(i, g, 1000, 1000, 2000) for i, g in enumerate(self.governors)}
        return CpuTuning(freq, "none", (), None)

    def cpu_count(self) -> int:
        return self.cpus

    def pm_qos_available(self) -> bool:
        return self.pm_qos

    def pid_alive(self, pidfile: str) -> bool:
        return self.holding and pidfile.endswith(("pmqos.pid", "adapt.pid"))

    def stamp(self, name: str) -> str | None:
        return self.stamps.get(name)

    def rps_mask(self, ifname: str) -> int | None:
        return self.rps.get(ifname)


MODEL = RouterModel(wans=(Wan("eth0"),), lans=(Lan("eth1", "192.168.77.1/24"),))


def whys(steps: list[Step]) -> list[str]:
    return [s.why for s in steps]


def test_governor_only_where_a_policy_differs(tmp_path):
    want = Tuning(governor="performance")
    assert engine.plan_governor(want, FakeProbe(tmp_path)) == []
    assert engine.plan_governor(want, FakeProbe(tmp_path, governors=())) == []  # no cpufreq
    (step,) = engine.plan_governor(want, FakeProbe(tmp_path, governors=("performance",
                                                                        "powersave")))
    assert step.why == "governor performance on every CPU" and step.action is not None


def test_latency_hold_starts_restarts_and_releases(tmp_path):
    hold = Tuning(hold_latency=True, max_cstate_latency_us=3)
    (start,) = engine.plan_latency_hold(hold, FakeProbe(tmp_path))
    assert start.why == "hold CPU wake-up latency <= 3 us (deep C-states off)"
    assert start.commands[0][-2:] == ("keel.tuning.hold", "3")
    assert start.stamps == ((str(tmp_path / "state" / "pmqos"), "3\n"),)
    held = FakeProbe(tmp_path, holding=True, stamps={"pmqos": "3"})
    assert engine.plan_latency_hold(hold, held) == []
    other = FakeProbe(tmp_path, holding=True, stamps={"pmqos": "10"})
    assert whys(engine.plan_latency_hold(hold, other)) == [
        "release the old CPU latency request", start.why]
    assert engine.plan_latency_hold(hold, FakeProbe(tmp_path, pm_qos=False)) == []
    off = Tuning(hold_latency=False)
    assert engine.plan_latency_hold(off, FakeProbe(tmp_path)) == []
    assert whys(engine.plan_latency_hold(off, held)) == ["release the CPU latency request"]


def test_rps_on_single_queue_nics_whose_mask_differs(tmp_path):
    probe = FakeProbe(tmp_path, cpus=4, rps={"eth0": 0, "eth1": 0xf})
    assert whys(engine.plan_rps(MODEL, probe)) == [
        "RPS/XPS on eth0 over CPUs 0-3 (mask f)"]
    assert engine.plan_rps(MODEL, FakeProbe(tmp_path, cpus=1, rps={"eth0": 0})) == []
    assert engine.plan_rps(MODEL, FakeProbe(tmp_path, rps={"eth0": None})) == []  # multi-queue
    off = RouterModel(wans=(Wan("eth0"),), tuning=Tuning(rps=False))
    assert engine.plan_rps(off, FakeProbe(tmp_path, rps={"eth0": 0})) == []


def test_plan_tuning_is_the_three_in_order(tmp_path):
    probe = FakeProbe(tmp_path, governors=("powersave",), rps={"eth1": 1})
    assert whys(engine.plan_tuning(MODEL, probe)) == [
        "governor performance on every CPU",
        "hold CPU wake-up latency <= 3 us (deep C-states off)",
        "RPS/XPS on eth1 over CPUs 0-3 (mask f)"]


class Recorder:
    def __init__(self) -> None:
        self.ran: list[list[str]] = []

    def run(self, argv: list[str], check: bool = True):
        self.ran.append(argv)


def test_execute_returns_outcomes_and_prints_the_notes(tmp_path):
    stamp = tmp_path / "state" / "x"
    steps = [
        Step("tuning", "governor performance on every CPU",
             action=lambda: ["policy0: governor 'performance' not available (has: powersave)"]),
        Step("shaping", "CAKE", (("tc", "qdisc", "show"),), stamps=((str(stamp), "1\n"),)),
    ]
    said: list[str] = []
    runner = Recorder()
    outcomes = execute(steps, runner, said.append)  # type: ignore[arg-type]
    assert [o.step for o in outcomes] == steps
    assert outcomes[0].notes == ("policy0: governor 'performance' not available "
                                 "(has: powersave)",)
    assert outcomes[1].notes == ()
    assert said == ["tuning: governor performance on every CPU",
                    "  policy0: governor 'performance' not available (has: powersave)",
                    "shaping: CAKE"]
    assert runner.ran == [["tc", "qdisc", "show"]] and stamp.read_text() == "1\n"


class TunnelProbe(FakeProbe):
    """wg0 up with its address, keel's stamps in place, and `routes` through it."""

    def __init__(self, run_dir: Path, routes: set[str]) -> None:
        super().__init__(run_dir)
        self.through = routes

    def links(self) -> dict[str, dict]:
        return {"wg0": {"ifname": "wg0", "flags": ["UP"], "mtu": 1420,
                        "linkinfo": {"info_kind": "wireguard"}}}

    def addresses(self, ifname: str) -> set[str]:
        return {"10.77.0.1/24"}

    def routes(self, ifname: str) -> set[str]:
        return self.through

    def rules(self) -> str:
        return ""


def test_a_prefix_gone_from_the_config_loses_its_route_through_the_tunnel(tmp_path):
    """Unpairing an edge takes its LAN out of wireguard.prefixes: its route goes too."""
    from keel.model import Peer, WireGuard

    wg = WireGuard(address=("10.77.0.1/24",), route="prefixes", prefixes=("192.168.77.0/24",),
                   peer=(Peer("K" * 43 + "=", ("10.77.0.2/32", "192.168.77.0/24")),))
    model = RouterModel(wans=(Wan("eth0"),), wireguard=wg)
    probe = TunnelProbe(tmp_path, {"192.168.77.0/24", "192.168.78.0/24"})
    steps = [s for s in engine.plan_tunnel(model, probe, lambda: "P" * 43 + "=")
             if s.component == "routes"]
    (step,) = steps
    assert ("ip", "route", "del", "192.168.78.0/24", "dev", "wg0") in step.commands
    assert not any("del" in c and "192.168.77.0/24" in c for c in step.commands)
    # route = none: every route keel put there goes
    none = RouterModel(wans=(Wan("eth0"),), wireguard=WireGuard(address=("10.77.0.1/24",)))
    (step,) = [s for s in engine.plan_tunnel(none, TunnelProbe(tmp_path, {"192.168.77.0/24"}),
                                             lambda: "P" * 43 + "=") if s.component == "routes"]
    assert step.commands == (("ip", "route", "del", "192.168.77.0/24", "dev", "wg0"),)


class ShapingProbe(engine.Probe):
    """Links and qdiscs given as plain values: {device: [(kind, root)]}."""

    def __init__(self, run_dir: Path, qdiscs: dict[str, list[tuple[str, bool]]]) -> None:
        super().__init__(runner=None, run_dir=run_dir)  # type: ignore[arg-type]
        self.devices = qdiscs

    def links(self) -> dict[str, dict]:
        return {dev: {"ifname": dev} for dev in self.devices}

    def qdiscs(self, ifname: str | None = None) -> list[Qdisc]:
        return [Qdisc(ifname or "", kind, "1:", root, 0, 0, 0, 0, 0, None, {}, ())
                for kind, root in self.devices.get(ifname or "", [])]


def test_shaping_off_after_the_tunnel_takes_cake_off_the_tunnel_and_its_ifb(tmp_path):
    """Found in the lab: with CAKE on the tunnel (attach = "tunnel") and the
    config then turning shaping off, CAKE stayed on wg0 and ifb4wg0 at the
    old rates while the config said off. Now it goes, GRO back on."""
    from keel.model import WireGuard

    shaped = {"eth0": [("fq_codel", True)], "wg0": [("cake", True), ("ingress", False)],
              "ifb4wg0": [("cake", True)], "eth1": []}
    model = RouterModel(wans=(Wan("eth0"),), wireguard=WireGuard(address=("10.77.0.2/24",)))
    steps = engine.plan_shaping(model, ShapingProbe(tmp_path, shaped))
    commands = [c for s in steps for c in s.commands]
    assert ("tc", "qdisc", "del", "dev", "wg0", "root") in commands
    assert ("tc", "qdisc", "del", "dev", "wg0", "handle", "ffff:", "ingress") in commands
    assert ("ip", "link", "del", "ifb4wg0") in commands
    assert ("ethtool", "-K", "wg0", "gro", "on") in commands
    assert "CAKE leaves wg0" in whys(steps)
    # a tunnel never shaped: nothing to take off it
    bare = {"eth0": [("fq_codel", True)], "wg0": [("noqueue", True)], "eth1": []}
    steps = engine.plan_shaping(model, ShapingProbe(tmp_path, bare))
    assert not any("wg0" in c for s in steps for c in s.commands), whys(steps)


def test_shaping_moved_to_the_tunnel_leaves_the_wan_plain_fq_codel(tmp_path):
    from keel.model import Shaping, WireGuard

    shaped = {"eth0": [("cake", True), ("ingress", False)], "ifb4eth0": [("cake", True)],
              "wg0": [("noqueue", True)], "eth1": []}
    model = RouterModel(wans=(Wan("eth0", shaping=Shaping(download_kbit=9000, upload_kbit=900,
                                                          attach="tunnel")),),
                        wireguard=WireGuard(address=("10.77.0.2/24",)))
    steps = engine.plan_shaping(model, ShapingProbe(tmp_path, shaped))
    commands = [c for s in steps for c in s.commands]
    assert ("tc", "qdisc", "replace", "dev", "eth0", "root", "fq_codel") in commands
    assert ("tc", "qdisc", "del", "dev", "eth0", "handle", "ffff:", "ingress") in commands
    assert ("ip", "link", "del", "ifb4eth0") in commands
    assert not any(c[:3] == ("ethtool", "-K", "eth0") for c in commands)
    assert "CAKE leaves eth0" in whys(steps)


def adaptive_model(attach: str = "wan", down: int = 3600) -> RouterModel:
    from keel.model.router import Peer, Shaping, WireGuard

    shaping = Shaping(download_kbit=down, upload_kbit=1350, attach=attach, adaptive=True,
                      download_min_kbit=1500 if down else 0,
                      download_max_kbit=4000 if down else 0,
                      upload_min_kbit=600, upload_max_kbit=1500)
    hub = Peer("k" * 43 + "=", ("10.99.0.0/24", "10.99.0.1/32"), "203.0.113.1:51820")
    site = Peer("s" * 43 + "=", ("10.99.0.9/32",))  # reaches us: not probed
    return RouterModel(wans=(Wan("eth0", shaping=shaping),),
                       wireguard=WireGuard(address=("10.99.0.2/24",), peer=(site, hub)))


def test_adaptive_cake_starts_its_daemon_with_the_peer_devices_and_bounds(tmp_path):
    (start,) = engine.plan_adaptive(adaptive_model(), FakeProbe(tmp_path))
    assert start.why == "adaptive CAKE: rates follow the line (probing 10.99.0.1)"
    argv = start.commands[0]
    assert argv[argv.index("--") + 1:][1:] == (
        "keel.adaptive.daemon", "--peer", "10.99.0.1", "--egress", "eth0",
        "--ingress", "ifb4eth0", "--tunnel", "wg0", "--source", "10.99.0.2",
        "--up", "600:1350:1500", "--down", "1500:3600:4000")
    (tunnel,) = engine.plan_adaptive(adaptive_model("tunnel", down=0), FakeProbe(tmp_path))
    assert tunnel.commands[0][-10:] == ("--egress", "wg0", "--ingress", "ifb4wg0",
                                        "--tunnel", "wg0", "--source", "10.99.0.2",
                                        "--up", "600:1350:1500")  # no --down: not shaped


def test_adaptive_cake_probes_ipv4_only(tmp_path):
    """A peer with only an IPv6 /128, or a tunnel with only IPv6 addresses,
    gives the daemon nothing to probe (the loader refuses such a config)."""
    from dataclasses import replace

    from keel.model.router import Peer

    model = adaptive_model()
    assert model.wireguard is not None
    v6_peer = replace(model.wireguard, peer=(Peer("k" * 43 + "=", ("fd00::1/128",),
                                                  "203.0.113.1:51820"),))
    v6_self = replace(model.wireguard, address=("fd00::2/64",))
    for wg in (v6_peer, v6_self):
        assert engine.adaptive_argv(replace(model, wireguard=wg)) is None


def test_adaptive_cake_runs_once_restarts_on_change_and_stops_when_off(tmp_path):
    model = adaptive_model()
    (start,) = engine.plan_adaptive(model, FakeProbe(tmp_path))
    digest = start.stamps[0][1].strip()
    running = FakeProbe(tmp_path, holding=True, stamps={"adapt": digest})
    assert engine.plan_adaptive(model, running) == []
    changed = FakeProbe(tmp_path, holding=True, stamps={"adapt": "other"})
    assert whys(engine.plan_adaptive(model, changed)) == ["adaptive CAKE: restarted", start.why]
    assert whys(engine.plan_adaptive(MODEL, running)) == ["adaptive CAKE off"]
    assert engine.plan_adaptive(MODEL, FakeProbe(tmp_path)) == []


class DhcpProbe(FakeProbe):
    """Ports with a DHCP client's pidfile, alive or not."""

    def __init__(self, run_dir: Path, alive: set[str], ports: set[str]) -> None:
        super().__init__(run_dir)
        self.alive, self.ports = alive, ports

    def pid_alive(self, pidfile: str) -> bool:
        return Path(pidfile).name in self.alive

    def links(self) -> dict:
        return {p: {"flags": ["UP"]} for p in self.ports}

    def addresses(self, ifname: str) -> set[str]:
        return {"192.168.77.1/24"} if ifname == "eth0" else set()

    def dynamic_addresses(self, ifname: str) -> set[str]:
        return set()


def test_a_dhcp_client_left_on_a_port_that_is_no_longer_the_wan_is_stopped(tmp_path):
    """The WAN moved from eth0 to eth2 (found by its cable): eth0's client
    stops before eth0 takes the LAN's address, and once it has exited eth0's
    IPv4 addresses are flushed (a lease it took after the probe goes too:
    seen in the lab, a LAN port kept a lease beside its static address);
    the LAN's address is then added though the probe saw it. The WAN's own
    client and a dead pidfile are left alone; a port that is gone is not
    flushed."""
    for name in ("udhcpc-eth0.pid", "udhcpc-eth2.pid", "udhcpc-eth9.pid", "udhcpc-gone.pid"):
        (tmp_path / name).write_text("1\n")
    model = RouterModel(wans=(Wan("eth2"),), lans=(Lan("eth0", "192.168.77.1/24"),))
    probe = DhcpProbe(tmp_path, {"udhcpc-eth0.pid", "udhcpc-eth2.pid", "udhcpc-gone.pid"},
                      {"eth0", "eth2"})
    eth0, gone = engine.plan_stale_dhcp_clients(model, probe)
    assert eth0.why.startswith("stop the DHCP client on eth0") and eth0.action is not None
    assert eth0.commands == (("ip", "-4", "addr", "flush", "dev", "eth0", "scope", "global"),)
    assert gone.why.startswith("stop the DHCP client on gone") and gone.commands == ()
    (lan,) = [s for s in engine.plan_interfaces(model, probe) if "eth0" in s.why]
    assert lan.commands == (("ip", "addr", "replace", "192.168.77.1/24", "dev", "eth0"),)
    import inspect  # planned before the ports take their addresses
    source = inspect.getsource(engine.plan)
    assert source.index("plan_stale_dhcp_clients") < source.index("plan_interfaces")
    assert engine.plan_stale_dhcp_clients(MODEL, DhcpProbe(tmp_path, set(), set())) == []
