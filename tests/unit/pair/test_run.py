"""`keel pair` on both sides over loopback: the real sockets and session,
with the system parts (nft, apply, wg) recorded. The faults leave the hub's
config unapplied and its pairing port closed (the ruleset loaded again
without the rule, the socket refusing)."""

from __future__ import annotations

import dataclasses
import ipaddress
import os
import signal
import socket
import subprocess
import threading
import time
from pathlib import Path

import pytest

from keel.config.dump import to_toml
from keel.model import reading
from keel.pair import run
from keel.pair.errors import PairError
from keel.system.commands import CommandError, Runner
from tests.unit.pair.conftest import EDGE_KEY, HUB_KEY, edge_config, hub_config


class NftRecorder(Runner):
    """Keeps each nft command; `fails` picks those that fail (rc 1, with
    what nft says on stderr)."""

    def __init__(self, fails=None) -> None:
        super().__init__()
        self.fails = fails or (lambda argv: None)

    def run(self, argv, **kwargs):
        self.ran.append(list(argv))
        if (err := self.fails(list(argv))) is not None:
            if kwargs.get("check", True):
                raise CommandError(argv, 1, err)
            return subprocess.CompletedProcess(argv, 1, "", err)
        return subprocess.CompletedProcess(argv, 0, "", "")

    def opened(self, port: int, timeout_s: int) -> bool:
        return ["nft", f"flush set inet keel pairing; add element inet keel pairing "
                       f"{{ {port} timeout {timeout_s}s }}"] in self.ran

    def closed(self, port: int) -> bool:
        return ["nft", "delete", "element", "inet", "keel", "pairing", f"{{ {port} }}"] \
            in self.ran

    def reloads(self) -> list[list[str]]:
        """Any load or flush of the ruleset: keel pair never does one."""
        return [a for a in self.ran if a[:2] == ["nft", "-f"] or "flush ruleset" in " ".join(a)]


class Side:
    def __init__(self, tmp: Path, key: str, handshake_after: float = 0.0) -> None:
        self.lines: list[str] = []
        self.applied: list[tuple[str, str]] = []
        self.confirmed = 0
        self.nft = NftRecorder()
        self.handshake_after = handshake_after
        self.synced = 0  # keel fleet sync started (the hub, once an edge is kept)
        self.sides = run.Sides(
            say=self.lines.append, public_key=lambda: key, apply=self.apply,
            confirm=self.confirm, handshake=self.handshake, run_dir=tmp, runner=self.nft,
            wan_networks=lambda config: [], hub_networks=lambda config: [],
            sync_fleet=self.sync)

    def sync(self) -> None:
        self.synced += 1

    def apply(self, config, path: Path, note: str):
        self.applied.append((to_toml(config), note))
        self.at = time.time()
        return True, "applied; rolls back to revision 1 in 120 s unless `keel confirm` comes first"

    def confirm(self) -> str:
        self.confirmed += 1
        return "confirmed"

    def handshake(self, key: str) -> int:
        return int(time.time()) + 1 if time.time() >= self.at + self.handshake_after else 0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def hub_side(tmp_path, monkeypatch):
    port = free_port()
    path = tmp_path / "hub.toml"
    path.write_text(to_toml(hub_config(port=port)))
    monkeypatch.setattr(reading, "USER_CONFIG", path)
    side = Side(tmp_path, HUB_KEY)
    side.port = port
    return side


def start_hub(side: Side, wait_s: float = 20):
    out: dict = {}

    def body():
        try:
            out["rc"] = run.pair_hub(side.sides, wait_s=wait_s)
        except PairError as err:
            out["error"] = err

    t = threading.Thread(target=body, daemon=True)
    t.start()
    deadline = time.time() + 10
    while not any(line.startswith("on the edge:") for line in side.lines):
        assert time.time() < deadline, side.lines
        time.sleep(0.02)
    return t, out


def shown_code(side: Side) -> str:
    line = next(line for line in side.lines if line.startswith("on the edge:"))
    return line.split()[-1]


def edge_side(tmp_path, monkeypatch) -> Side:
    path = tmp_path / "edge.toml"
    path.write_text(to_toml(edge_config()))
    side = Side(tmp_path, EDGE_KEY)
    return side, path


def test_hub_and_edge_pair_apply_and_keep_it_after_the_handshake(hub_side, tmp_path,
                                                                monkeypatch):
    t, out = start_hub(hub_side)
    code = shown_code(hub_side)
    # the port is open while the code waits: one element of keel's pairing set,
    # with a kernel timeout (the window plus 15 s)
    assert hub_side.nft.opened(hub_side.port, 20 + 15)
    edge, path = edge_side(tmp_path, monkeypatch)
    monkeypatch.setattr(reading, "USER_CONFIG", path)
    assert run.pair_edge(f"127.0.0.1:{hub_side.port}", code, edge.sides) == 0
    t.join(20)
    assert out == {"rc": 0}
    # the port closed again: that element deleted, nothing else, and nothing listens
    assert hub_side.nft.closed(hub_side.port) and len(hub_side.nft.ran) == 2
    assert hub_side.nft.reloads() == []
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", hub_side.port), timeout=2)
    (hub_text, hub_note), = hub_side.applied
    (edge_text, edge_note), = edge.applied
    assert hub_note == "pair: edge" and edge_note == "pair: hub"
    assert EDGE_KEY in hub_text and HUB_KEY in edge_text
    assert f'endpoint = "127.0.0.1:{hub_side.port}"' in edge_text
    assert hub_side.confirmed == edge.confirmed == 1
    assert (hub_side.synced, edge.synced) == (1, 0)  # the other edges learn its LAN
    assert any("handshake with edge after" in line for line in hub_side.lines)
    # the code is shown on the hub only, and never in what the edge says
    assert not any(code in line for line in edge.lines)


def test_a_wrong_code_changes_nothing_and_closes_the_port(hub_side, tmp_path, monkeypatch):
    t, out = start_hub(hub_side)
    code = shown_code(hub_side)
    wrong = code[:-1] + str((int(code[-1]) + 1) % 10)
    edge, path = edge_side(tmp_path, monkeypatch)
    monkeypatch.setattr(reading, "USER_CONFIG", path)
    with pytest.raises(PairError, match="wrong code"):
        run.pair_edge(f"127.0.0.1:{hub_side.port}", wrong, edge.sides)
    t.join(20)
    assert "wrong code" in str(out["error"])
    assert hub_side.applied == [] and edge.applied == []
    assert hub_side.nft.closed(hub_side.port) and hub_side.nft.reloads() == []
    # a second attempt: nobody listens any more
    with pytest.raises(PairError, match="cannot reach the hub"):
        run.pair_edge(f"127.0.0.1:{hub_side.port}", code, edge.sides)
    assert edge.applied == []


def test_no_edge_within_the_wait_closes_the_port(hub_side):
    t, out = start_hub(hub_side, wait_s=0.5)
    t.join(10)
    assert "no edge came within" in str(out["error"])
    assert hub_side.applied == [] and hub_side.nft.closed(hub_side.port)
    assert len(hub_side.nft.ran) == 2
    assert any(line == f"TCP {hub_side.port} closed" for line in hub_side.lines)


def test_no_handshake_leaves_the_change_to_roll_back(hub_side, tmp_path, monkeypatch):
    monkeypatch.setattr(run, "HANDSHAKE_S", 1.5)
    hub_side.handshake_after = 60
    t, out = start_hub(hub_side)
    edge, path = edge_side(tmp_path, monkeypatch)
    monkeypatch.setattr(reading, "USER_CONFIG", path)
    run.pair_edge(f"127.0.0.1:{hub_side.port}", shown_code(hub_side), edge.sides)
    t.join(20)
    assert out == {"rc": 1} and hub_side.confirmed == 0 and len(hub_side.applied) == 1
    assert hub_side.synced == 0  # not kept: nothing to tell the other edges
    assert any("rolls back by itself" in line for line in hub_side.lines)


@pytest.mark.parametrize("hub, why", [("203.0.113.2:0", "not a port"),
                                      ("203.0.113.2:x", "not a port")])
def test_a_mistyped_hub_address(hub, why, tmp_path, monkeypatch):
    edge, path = edge_side(tmp_path, monkeypatch)
    monkeypatch.setattr(reading, "USER_CONFIG", path)
    with pytest.raises(PairError, match=why):
        run.pair_edge(hub, "1234-5678", edge.sides)


# --- issue 25: the pairing port fails closed -------------------------------------------
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP])
def test_sigterm_or_sighup_while_the_code_waits_closes_the_port(hub_side, signum):
    """A closed terminal or a dropped SSH session: the port's element is
    deleted, nothing else is touched, and keel pair says why in one line.
    (Run in the main thread, where Python runs signal handlers; on a keel
    that does not handle the signal, the test fails instead of dying.)"""
    seen: dict = {}

    def stranger() -> None:
        deadline = time.time() + 10
        while not any(line.startswith("on the edge:") for line in hub_side.lines):
            if time.time() > deadline:
                return
            time.sleep(0.02)
        seen["handler"] = signal.getsignal(signum)
        if seen["handler"] in (signal.SIG_DFL, signal.SIG_IGN, None):
            socket.create_connection(("127.0.0.1", hub_side.port)).close()  # unblock
        else:
            os.kill(os.getpid(), signum)

    threading.Thread(target=stranger, daemon=True).start()
    with pytest.raises(PairError) as err:
        run.pair_hub(hub_side.sides, wait_s=20)
    assert seen["handler"] not in (signal.SIG_DFL, signal.SIG_IGN, None), \
        f"{signal.Signals(signum).name} is not handled"
    name = signal.Signals(signum).name
    assert str(err.value).startswith(f"stopped by {name}: the pairing port is closed, "
                                     "nothing changed")
    assert hub_side.nft.opened(hub_side.port, 35) and hub_side.nft.closed(hub_side.port)
    assert hub_side.nft.reloads() == [] and hub_side.applied == []
    assert f"TCP {hub_side.port} closed" in hub_side.lines
    assert signal.getsignal(signum) is not seen["handler"]  # handed back


def test_sigkill_leaves_only_an_element_that_expires_by_itself(hub_side):
    """What a SIGKILL cannot clean up: the element keel pair added carries a
    kernel timeout of the code's window plus 15 s, and nothing else was
    changed (no rule in keel's ruleset, no reload to undo)."""
    t, _ = start_hub(hub_side, wait_s=1)
    t.join(10)
    (opened, closed) = hub_side.nft.ran
    assert opened == ["nft", "flush set inet keel pairing; add element inet keel pairing "
                             f"{{ {hub_side.port} timeout 16s }}"]
    assert closed[:4] == ["nft", "delete", "element", "inet"]


def test_a_port_already_in_use_is_one_line_and_opens_nothing(hub_side):
    """Item 8: was an OSError traceback."""
    in_use = socket.create_server(("", hub_side.port), family=socket.AF_INET)
    with in_use, pytest.raises(PairError, match=f"TCP {hub_side.port} is already in use on "
                                                r"this router \(another keel pair waiting\?\)"):
        run.pair_hub(hub_side.sides, wait_s=5)
    assert hub_side.nft.ran == [] and hub_side.applied == []


def test_closing_never_reloads_or_flushes_even_when_nft_fails(hub_side):
    """The old fallback was `nft flush ruleset`: no firewall, forwarding on."""
    hub_side.nft.fails = lambda argv: "Error: busy" if "delete" in argv else None
    t, out = start_hub(hub_side, wait_s=0.5)
    t.join(10)
    assert "no edge came within" in str(out["error"])
    assert hub_side.nft.reloads() == [] and len(hub_side.nft.ran) == 2
    assert any(line.startswith(f"TCP {hub_side.port} closes by itself within 15 s")
               for line in hub_side.lines)


def test_a_ruleset_without_the_pairing_set_opens_nothing(hub_side):
    hub_side.nft.fails = lambda argv: ("Error: No such file or directory" if "add element"
                                       in " ".join(argv) else None)
    with pytest.raises(PairError, match=r"keel's ruleset has no pairing set \(run keel apply"):
        run.pair_hub(hub_side.sides, wait_s=5)
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", hub_side.port), timeout=2)


def test_a_code_burnt_by_a_stranger_is_said_on_both_sides(hub_side, tmp_path, monkeypatch):
    """Item 9: a port scanner's connect uses the code up (one attempt per
    code); the hub says so, and the edge's next attempt hears that the hub
    is not waiting."""
    t, out = start_hub(hub_side)
    code = shown_code(hub_side)
    socket.create_connection(("127.0.0.1", hub_side.port)).close()
    t.join(40)
    said = str(out["error"])
    assert "perhaps not the edge" in said and "the code is used up" in said
    assert hub_side.nft.closed(hub_side.port) and hub_side.applied == []
    edge, path = edge_side(tmp_path, monkeypatch)
    monkeypatch.setattr(reading, "USER_CONFIG", path)
    with pytest.raises(PairError, match="the hub is not waiting: ask for a new code"):
        run.pair_edge(f"127.0.0.1:{hub_side.port}", code, edge.sides)
    assert edge.applied == []


def test_keel_pair_prints_one_line_whatever_happens(monkeypatch, capsys):
    """No traceback escapes `keel pair`, even for an error keel did not foresee."""
    from keel.pair import cli

    def boom(**kwargs):
        raise KeyError("\x1b[2J")

    monkeypatch.setattr(run, "pair_hub", boom)
    args = type("Args", (), {"hub": None, "wait": 5, "allow_public": []})()
    assert cli._pair(args) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("keel pair: ") and "\x1b" not in err


def test_allow_public_takes_prefixes_only():
    import argparse

    from keel.pair import cli

    parser = argparse.ArgumentParser()
    cli.add_pair_commands(parser.add_subparsers())
    args = parser.parse_args(["pair", "--allow-public", "8.8.8.0/24"])
    assert args.allow_public == ["8.8.8.0/24"] and args.hub is None
    for bad in ("8.8.8.1/24", "fe80::/64%eth0", "8.8.8.0/24\n"):
        with pytest.raises(SystemExit):
            parser.parse_args(["pair", "--allow-public", bad])


def test_the_hubs_live_networks_keep_an_edges_lan_off_them(hub_side, tmp_path, monkeypatch):
    """A hub whose WAN is by DHCP has its subnet in no config: pair_hub
    reads its interfaces as they are and refuses an edge LAN on them
    (was admitted: the overlap check read only the config)."""
    hub_side.sides.hub_networks = lambda config: [
        ("the hub's WAN subnet (live)", ipaddress.ip_network("192.168.77.0/24"))]
    t, out = start_hub(hub_side)
    edge, path = edge_side(tmp_path, monkeypatch)  # its LAN is 192.168.77.0/24
    monkeypatch.setattr(reading, "USER_CONFIG", path)
    with pytest.raises(PairError, match="refused"):
        run.pair_edge(f"127.0.0.1:{hub_side.port}", shown_code(hub_side), edge.sides)
    t.join(20)
    assert str(out["error"]).startswith(
        "the edge's LAN 192.168.77.0/24 overlaps the hub's WAN subnet (live) 192.168.77.0/24")
    assert hub_side.applied == [] and edge.applied == []
    assert hub_side.nft.closed(hub_side.port)


def test_the_hubs_live_networks_are_every_nics_subnets_and_its_gateways(monkeypatch):
    from keel.apply import probe
    from keel.parse.ipaddr import Nic

    nics = [Nic("eth0", "", "up", ("192.168.1.23/24", "2001:db8:1::23/64")),
            Nic("eth1", "", "up", ("10.10.0.1/24",)),
            Nic("eth9\x1b[2J", "", "up", ("172.20.0.1/16",))]
    monkeypatch.setattr(run, "read_nics", lambda: nics)
    monkeypatch.setattr(probe.Probe, "default_gateway",
                        lambda self, version=4: ("192.168.1.1", "eth0") if version == 4
                        else None)
    hub = hub_config()
    hub = dataclasses.replace(hub, wan=dataclasses.replace(hub.wan, interface="eth0"))
    found = [(what, str(net)) for what, net in run._hub_networks(hub)]
    assert found == [("the hub's WAN subnet (live)", "192.168.1.0/24"),
                     ("the hub's WAN subnet (live)", "2001:db8:1::/64"),
                     ("the hub's network on eth1 (live)", "10.10.0.0/24"),
                     ("the hub's network on eth9\\x1b[2J (live)", "172.20.0.0/16"),
                     ("the hub's gateway (live)", "192.168.1.1/32")]
    # the edge's side reads its WAN only, as before
    assert [str(net) for _, net in run.wan_networks_now(hub)] == [
        "192.168.1.0/24", "2001:db8:1::/64", "192.168.1.1/32"]


def _hub_with_a_public_lan_behind_it(port: int):
    """A hub that already routes 192.0.2.0/24 (a public prefix its operator
    allowed) to another edge: the grant it gives carries that route."""
    from keel.pair import settle
    from keel.pair.messages import EdgeOffer
    from tests.unit.pair.conftest import EDGE2_KEY

    offer = EdgeOffer("edge-b", EDGE2_KEY, "192.0.2.0/24", "203.0.113.2")
    return settle.hub_admit(hub_config(port=port), offer, HUB_KEY,
                            allow_public=("192.0.2.0/24",))[0]


@pytest.mark.parametrize("allow_public", [(), ("192.0.2.0/24",)])
def test_the_edge_takes_a_public_route_only_when_its_operator_named_it(
        tmp_path, monkeypatch, allow_public):
    port = free_port()
    path = tmp_path / "hub.toml"
    path.write_text(to_toml(_hub_with_a_public_lan_behind_it(port)))
    monkeypatch.setattr(reading, "USER_CONFIG", path)
    hub = Side(tmp_path, HUB_KEY)
    hub.port = port
    t, out = start_hub(hub)
    edge, edge_path = edge_side(tmp_path, monkeypatch)
    monkeypatch.setattr(reading, "USER_CONFIG", edge_path)
    if allow_public:
        assert run.pair_edge(f"127.0.0.1:{port}", shown_code(hub), edge.sides,
                             allow_public=allow_public) == 0
        t.join(20)
        assert out == {"rc": 0}
        (edge_text, _), = edge.applied
        assert '"192.0.2.0/24"' in edge_text
        return
    with pytest.raises(PairError, match=r"the hub's grant routes 192\.0\.2\.0/24 into the "
                                        r"tunnel: not private .* --allow-public 192\.0\.2\.0/24"):
        run.pair_edge(f"127.0.0.1:{port}", shown_code(hub), edge.sides)
    t.join(20)
    assert "error" in out and edge.applied == [] and hub.applied == []


def test_allow_public_on_the_edge_goes_to_pair_edge(monkeypatch):
    """Was refused with exit 2 ("--allow-public is for the hub")."""
    import argparse

    from keel.pair import cli

    seen = {}
    monkeypatch.setattr(run, "pair_edge",
                        lambda hub, code, **kw: seen.update(hub=hub, code=code, **kw) or 0)
    parser = argparse.ArgumentParser()
    cli.add_pair_commands(parser.add_subparsers())
    args = parser.parse_args(["pair", "--allow-public", "192.0.2.0/24", "203.0.113.2",
                              "1234-5678"])
    assert args.func(args) == 0
    assert seen == {"hub": "203.0.113.2", "code": "1234-5678",
                    "allow_public": ("192.0.2.0/24",)}
