"""A staged upgrade (keel.fleet.rollout, the agent's side in keel.fleet.agent):
the order (the first edge alone, then groups); a rollout that stops at the
first edge that refuses the bundle, is rolled back by its gate or does not
come back, the edges after it untouched; the bundle sent whole through a
real socket, checked by its SHA-256, and the reboot only once the hub was
told; a hostile or broken transfer leaves nothing on the edge."""

from __future__ import annotations

import hashlib
import io
import socket
import threading
from pathlib import Path

import pytest

from keel.fleet import agent, rollout, wire
from keel.fleet.hub import Edge
from keel.metrics.server import Server
from keel.upgrade.system import UpgradeError

A, B, C, D = (Edge(n, f"10.99.0.{i}", f"key{i}") for i, n in
              enumerate(("edge-a", "edge-b", "edge-c", "edge-d"), 2))
OLD, NEW = "0.1.0", "0.2.0"
BEFORE = wire.Upgrade("kept", OLD, "", 100.0)


def names(plan: list[list[Edge]]) -> list[list[str]]:
    return [[e.name for e in g] for g in plan]


def test_the_first_edge_alone_then_groups_in_the_configs_order() -> None:
    edges = [A, B, C, D]
    assert names(rollout.stages(edges, None, set(), 2)) == [
        ["edge-a"], ["edge-b", "edge-c"], ["edge-d"]]
    # the least important site by the config's flag, or the operator's pick
    assert names(rollout.stages(edges, None, {"edge-c"}, 4)) == [
        ["edge-c"], ["edge-a", "edge-b", "edge-d"]]
    assert names(rollout.stages(edges, "edge-d", {"edge-c"}, 1)) == [
        ["edge-d"], ["edge-a"], ["edge-b"], ["edge-c"]]


@pytest.mark.parametrize(("edges", "first", "group", "says"), [
    ([A, B], "edge-x", 2, "--first edge-x: no edge of that name .*edge-a, edge-b"),
    ([], None, 2, "no edges"),
    ([A], None, 0, "--group 0"),
    ([A], None, 17, "--group 17"),
    ([A], "edge\x1b[2J", 2, r"--first edge\\x1b\[2J"),
])
def test_a_rollout_that_cannot_start_says_why(edges, first, group, says) -> None:
    with pytest.raises(rollout.RolloutError, match=says):
        rollout.stages(edges, first, set(), group)


class Fleet:
    """Edges as the hub meets them: each installs (or refuses), reboots
    (silent for `down` asks), then reports its gate's outcome."""

    def __init__(self, refuse: dict[str, str] | None = None,
                 outcome: dict[str, wire.Upgrade] | None = None,
                 never_back: set[str] = frozenset(), down: int = 2) -> None:
        self.refuse, self.outcome = refuse or {}, outcome or {}
        self.never_back, self.down = never_back, down
        self.sent: list[str] = []
        self.asks: dict[str, int] = {}
        self.lock = threading.Lock()

    def send(self, edge: Edge, progress) -> tuple[str, str]:
        with self.lock:
            self.sent.append(edge.name)
        for p in (0, 50, 100):
            progress(p)
        if edge.name in self.refuse:
            raise wire.WireError(f"the edge refused: not installed: {self.refuse[edge.name]}")
        return NEW, "B"

    def status(self, edge: Edge) -> wire.Status:
        with self.lock:
            installed = edge.name in self.sent
            n = self.asks[edge.name] = self.asks.get(edge.name, 0) + 1 if installed else 0
        if not installed:
            return wire.Status(edge.name, OLD, 1.0, 100.0, "A", BEFORE)
        if edge.name in self.never_back or n <= self.down:
            raise ConnectionRefusedError(111, "Connection refused")
        last = self.outcome.get(edge.name, wire.Upgrade("kept", NEW, "", 200.0))
        version = NEW if last.result == "kept" else OLD
        return wire.Status(edge.name, version, 2.0, 30.0, "B" if version == NEW else "A", last)


class Clock:
    def __init__(self) -> None:
        self.now = 0.0
        self.lock = threading.Lock()

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        with self.lock:
            self.now += seconds


def run(fleet: Fleet, plan: list[list[Edge]], back_s: float = 600) -> tuple[rollout.Rollout,
                                                                             list]:
    published: list[rollout.Rollout] = []
    steps = tuple(rollout.Step(e.name, n) for n, g in enumerate(plan) for e in g)
    start = rollout.Rollout("keel.raucb", 200 << 20, 1.0, steps, pid=1)
    clock = Clock()
    done = rollout.Runner(plan, start, fleet.send, fleet.status, published.append, back_s,
                          poll_s=10, clock=clock, sleep=clock.sleep).run()
    return done, published


def test_every_edge_kept_one_then_the_groups() -> None:
    fleet = Fleet()
    done, published = run(fleet, [[A], [B, C]])
    assert done.ok and done.verdict == f"every edge kept it (keel {NEW})"
    assert [s.phase for s in done.steps] == ["kept"] * 3
    assert fleet.sent[0] == "edge-a" and set(fleet.sent[1:]) == {"edge-b", "edge-c"}
    # edge-a was kept before edge-b was sent anything
    kept_a = next(i for i, r in enumerate(published) if r.step("edge-a").phase == "kept")
    sent_b = next(i for i, r in enumerate(published) if r.step("edge-b").phase != "waiting")
    assert kept_a < sent_b
    phases = [r.step("edge-a").phase for r in published]
    assert phases.index("sending") < phases.index("installing") < phases.index("booting")


def test_a_bundle_the_first_edge_does_not_trust_stops_the_rollout() -> None:
    fleet = Fleet(refuse={"edge-a": "the bundle is not signed by a key this router trusts"})
    done, _ = run(fleet, [[A], [B, C]])
    assert not done.ok and fleet.sent == ["edge-a"]
    assert done.verdict.startswith("stopped at edge-a: the edge refused: not installed: "
                                   "the bundle is not signed by a key this router trusts")
    assert done.verdict.endswith("edge-b, edge-c not touched")
    assert [s.phase for s in done.steps] == ["failed", "untouched", "untouched"]
    assert "STOPPED HERE" in done.lines()[1] and "untouched" in done.lines()[2]


def test_a_first_edge_rolled_back_by_its_gate_stops_the_rollout_with_its_reason() -> None:
    fleet = Fleet(outcome={"edge-a": wire.Upgrade(
        "rolled back", NEW, "the tunnel peer hub did not come back within 180 s", 300.0)})
    done, _ = run(fleet, [[A], [B]])
    assert fleet.sent == ["edge-a"] and done.step("edge-b").phase == "untouched"
    assert done.step("edge-a").detail == (
        "rolled back: the tunnel peer hub did not come back within 180 s; "
        f"it runs keel {OLD} in slot A")


def test_an_edge_that_never_comes_back_stops_the_rollout_at_the_bound() -> None:
    fleet = Fleet(never_back={"edge-b"})
    done, _ = run(fleet, [[A], [B, C], [D]], back_s=600)
    assert done.step("edge-a").phase == "kept" and done.step("edge-c").phase == "kept"
    assert done.step("edge-b").detail == ("no outcome within 600 s of its install "
                                          "(no answer: refused (no agent: paired by an older "
                                          "keel, or [fleet] not applied yet))")
    assert done.step("edge-d").phase == "untouched" and "edge-d not touched" in done.verdict


def test_an_edge_that_does_not_answer_before_is_not_sent_anything() -> None:
    fleet = Fleet()

    def status(edge: Edge) -> wire.Status:
        if edge.name == "edge-a":
            raise TimeoutError()
        return fleet.status(edge)

    fleet_status, fleet.status = fleet.status, status
    done, _ = run(fleet, [[A], [B]])
    assert fleet.sent == [] and done.step("edge-a").detail == (
        "no answer before the upgrade: no answer in time")
    del fleet_status


def test_the_state_file_reads_back_and_a_dead_rollout_is_said_cut(tmp_path) -> None:
    done, _ = run(Fleet(), [[A], [B]])
    path = tmp_path / "rollout.json"
    rollout.write_state(done, path)
    assert rollout.read_state(path) == done
    running = rollout.Rollout("k.raucb", 1 << 20, 1.0, done.steps, ended=False, pid=2 ** 22 + 7)
    rollout.write_state(running, path)
    assert rollout.read_state(path).verdict.startswith("cut short")
    path.write_text("{garbage")
    assert rollout.read_state(path) is None


def test_one_rollout_at_a_time(tmp_path) -> None:
    lock = tmp_path / "rollout.lock"
    with rollout.held(lock):
        done = threading.Event()
        errors: list[Exception] = []

        def other() -> None:
            try:
                with rollout.held(lock):
                    pass
            except rollout.RolloutError as err:
                errors.append(err)
            done.set()

        threading.Thread(target=other).start()
        done.wait(5)
    assert errors and "a rollout runs already" in str(errors[0])


# --- the edge's side: receive, install, reboot ---------------------------------------

BUNDLE = bytes(range(256)) * 8192  # 2 MiB


def offer_of(data: bytes, tunnel_wait: int = 180) -> wire.Offer:
    return wire.Offer(len(data), hashlib.sha256(data).hexdigest(), tunnel_wait)


def test_a_bundle_is_received_whole_and_checked(tmp_path) -> None:
    dest = tmp_path / "fleet.raucb"
    stream = io.BytesIO(BUNDLE)
    assert agent.receive(offer_of(BUNDLE), stream.read, dest, 1 << 30) == dest
    assert dest.read_bytes() == BUNDLE


@pytest.mark.parametrize(("data", "room", "says"), [
    (BUNDLE[:-1] + b"x", 1 << 30, "do not match the SHA-256"),
    (BUNDLE[:1000], 1 << 30, "stopped sending at 1000 of"),
    (BUNDLE, 1 << 20, "/data has room for 1 MiB, the bundle is 2 MiB"),
])
def test_a_damaged_short_or_too_large_bundle_leaves_nothing(tmp_path, data, room, says) -> None:
    dest = tmp_path / "fleet.raucb"
    with pytest.raises(agent.Refused, match=says):
        agent.receive(offer_of(BUNDLE), io.BytesIO(data).read, dest, room)
    assert list(tmp_path.iterdir()) == []


class Edge_:
    """An agent on loopback whose install receives into tmp_path (or
    refuses as the real one would), counting reboots."""

    def __init__(self, tmp_path: Path, refuse: str = "") -> None:
        self.got: list[bytes] = []
        self.reboots = 0
        self.rebooted = threading.Event()
        self.said: list[str] = []

        def install(offer, read):
            path = agent.receive(offer, read, tmp_path / "fleet.raucb", 1 << 30)
            self.got.append(path.read_bytes())
            path.unlink()
            if refuse:
                raise UpgradeError(refuse)
            return NEW, "B"

        def rebooted() -> None:
            self.reboots += 1
            self.rebooted.set()

        status = wire.Status("edge-a", OLD, 1.0, 1.0)
        self.agent = agent.Agent(lambda: status, lambda r: r, self.said.append, install,
                                 rebooted)
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.port = self.sock.getsockname()[1]
        self.server = Server([self.sock], lambda: b"", self.said.append,
                             handle=self.agent.handle)
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.server.serve, args=(self.stop, 0.05),
                                       daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.stop.set()
        self.thread.join(5)
        self.server.close()


def test_the_hub_sends_a_bundle_through_the_channel_and_the_edge_reboots_after(tmp_path) -> None:
    path = tmp_path / "keel.raucb"
    path.write_bytes(BUNDLE)
    (tmp_path / "edge").mkdir()
    edge = Edge_(tmp_path / "edge")
    try:
        seen: list[int] = []
        assert rollout.send_bundle("127.0.0.1", offer_of(BUNDLE), path, seen.append, 10,
                                   port=edge.port) == (NEW, "B")
        assert edge.got == [BUNDLE] and seen[-1] == 100
        assert edge.rebooted.wait(10) and edge.reboots == 1
        assert any("installed: keel 0.2.0 in slot B" in line for line in edge.said)
    finally:
        edge.close()


def test_a_bundle_the_edge_refuses_is_said_back_and_it_does_not_reboot(tmp_path) -> None:
    path = tmp_path / "keel.raucb"
    path.write_bytes(BUNDLE)
    (tmp_path / "edge").mkdir()
    edge = Edge_(tmp_path / "edge", refuse="the bundle is not signed by a key this router "
                                           "trusts: refused, nothing written")
    try:
        with pytest.raises(wire.WireError, match="the edge refused: not installed: the bundle "
                                                 "is not signed by a key this router trusts"):
            rollout.send_bundle("127.0.0.1", offer_of(BUNDLE), path, lambda p: None, 10,
                                port=edge.port)
        # a lying offer: its bytes are not what it said
        with pytest.raises(wire.WireError, match="do not match the SHA-256"):
            rollout.send_bundle("127.0.0.1", offer_of(BUNDLE[::-1]), path, lambda p: None, 10,
                                port=edge.port)
        assert edge.reboots == 0 and list((tmp_path / "edge").iterdir()) == []
    finally:
        edge.close()


def test_an_edge_without_an_installer_takes_no_bundle() -> None:
    a = agent.Agent(lambda: wire.Status("e", OLD, 1.0, 1.0), lambda r: r, lambda line: None)
    reply = a.reply(wire.upgrade_request(offer_of(BUNDLE)), io.BytesIO(BUNDLE).read)
    with pytest.raises(wire.WireError, match="takes no bundle"):
        wire.parse_installed_reply(reply)


def test_an_edge_that_refuses_before_reading_the_bundle_is_heard(tmp_path) -> None:
    """A refusal the edge sends before the bytes (no room on /data) reaches
    the hub, not a broken pipe."""
    big = tmp_path / "keel.raucb"
    big.write_bytes(b"\0" * (32 << 20))
    (tmp_path / "edge").mkdir()
    edge = Edge_(tmp_path / "edge")
    edge.agent.install = lambda offer, read: (_ for _ in ()).throw(
        agent.Refused("/data has room for 1 MiB, the bundle is 32 MiB"))
    try:
        with pytest.raises(wire.WireError, match="/data has room for 1 MiB"):
            rollout.send_bundle("127.0.0.1", offer_of(big.read_bytes()), big, lambda p: None,
                                10, port=edge.port)
    finally:
        edge.close()


def test_the_console_starts_the_rollout_as_its_own_command_never_a_shell(monkeypatch,
                                                                          tmp_path) -> None:
    import subprocess

    from keel.fleet import background
    from keel.upgrade.target import TargetError

    started: list[list[str]] = []
    monkeypatch.setattr(rollout, "LOG", tmp_path / "rollout.log")
    monkeypatch.setattr(subprocess, "Popen", lambda argv, **kw: started.append(argv))
    background.start_rollout("/tmp/b/good.raucb")
    assert started[0][-4:] == ["keel.cli", "fleet", "upgrade", "/tmp/b/good.raucb"]
    with pytest.raises(TargetError):
        background.start_rollout("/tmp/b/x.raucb; reboot")
    assert len(started) == 1
