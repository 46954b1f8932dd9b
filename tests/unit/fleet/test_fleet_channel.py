"""The fleet channel end to end on loopback: the edge's agent (keel.fleet.
agent, in the metrics server's limits) answers the hub's asks (keel.fleet.
hub); only the hub's address is served; a slow or endless request is cut;
the hub's view of every edge (answered, refused, silent, lying) and its
lines at 80 columns; and the apply plan and firewall rule of an edge."""

from __future__ import annotations

import socket
import threading
import time

import pytest

from keel.apply.fleet import agent_argv
from keel.fleet import agent, hub, wire
from keel.metrics.server import Server
from keel.model.from_config import model_from_config
from keel.pair import settle
from keel.pair.messages import EdgeOffer
from keel.pair.peers import PeerRow
from keel.render import nft
from tests.unit.pair.conftest import EDGE2_KEY, EDGE_KEY, HUB_KEY, edge_config, hub_config

STATUS = wire.Status(name="edge-a", version="0.1.0", at=1.0, uptime_s=5.0,
                     tunnel_p95_ms=4.0, routes=("192.168.78.0/24",))


class Running:
    """An agent serving on loopback (no device binding: a test host)."""

    def __init__(self, admits=lambda client: client == "127.0.0.1",
                 learn=lambda routes: routes) -> None:
        self.said: list[str] = []
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.port = self.sock.getsockname()[1]
        self.agent = agent.Agent(lambda: STATUS, learn, self.said.append)
        self.server = Server([self.sock], lambda: b"", self.said.append, handle=self.agent.handle,
                             admits=admits)
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.server.serve, args=(self.stop, 0.05),
                                       daemon=True)
        self.thread.start()

    def ask(self, request: bytes) -> bytes:
        return hub.ask("127.0.0.1", request, 5, port=self.port)

    def close(self) -> None:
        self.stop.set()
        self.thread.join(5)
        self.server.close()


@pytest.fixture
def running():
    r = Running()
    yield r
    r.close()


def test_the_hub_reads_the_status_and_gives_routes(running) -> None:
    assert wire.parse_status_reply(running.ask(wire.status_request())) == STATUS
    routes = ("192.168.79.0/24",)
    assert wire.parse_routes_reply(running.ask(wire.routes_request(routes))) == routes


def test_a_refused_route_is_said_back_and_logged() -> None:
    def learn(routes):
        raise settle.PairRefused("the hub gives 8.8.8.0/24: not private")

    r = Running(learn=learn)
    try:
        with pytest.raises(wire.WireError, match=r"the edge refused: .*not private"):
            wire.parse_routes_reply(r.ask(wire.routes_request(("8.8.8.0/24",))))
        assert any("not taken" in line for line in r.said)
    finally:
        r.close()


def test_an_address_other_than_the_hubs_is_closed_unread() -> None:
    r = Running(admits=lambda client: client == "10.77.0.1")
    try:
        with pytest.raises((OSError, wire.WireError)):
            r.ask(wire.status_request())
        assert r.server.answered.get(0) == 1
    finally:
        r.close()


def test_garbage_and_an_endless_line_are_refused_not_served(running) -> None:
    with pytest.raises(wire.WireError, match="the edge refused: request: not JSON"):
        wire.parse_status_reply(running.ask(b"GET / HTTP/1.1\n"))
    with socket.create_connection(("127.0.0.1", running.port), timeout=5) as conn:
        conn.sendall(b"x" * (wire.MAX_REQUEST + 10))
        reply = conn.recv(4096)
    assert b'"ok":false' in reply and b"longer than" in reply


def test_a_request_that_trickles_in_is_cut_at_the_read_timeout(monkeypatch) -> None:
    monkeypatch.setattr(agent, "READ_TIMEOUT_S", 0.5)
    a, b = socket.socketpair()
    with a, b:
        a.sendall(b'{"op":')
        began = time.monotonic()
        line = agent.read_line(b, wire.MAX_REQUEST, timeout_s=0.5)
        assert line == b'{"op":' and time.monotonic() - began < 5


def fleet():
    hub1, _ = settle.hub_admit(hub_config(), EdgeOffer("edge-a", EDGE_KEY, "192.168.77.0/24",
                                                       "x"), HUB_KEY)
    hub2, _ = settle.hub_admit(hub1, EdgeOffer("edge-b", EDGE2_KEY, "192.168.78.0/24", "x"),
                               HUB_KEY)
    return hub2


def test_the_hub_shows_each_edge_as_it_answered_or_did_not() -> None:
    config = fleet()
    assert [(e.name, e.address) for e in hub.fleet_edges(config)] == [
        ("edge-a", "10.77.0.2"), ("edge-b", "10.77.0.3")]

    def asker(address: str, request: bytes) -> bytes:
        if address == "10.77.0.2":
            return wire.status_reply(STATUS)
        raise ConnectionRefusedError(111, "Connection refused")

    peers = [PeerRow("edge-a", "10.77.0.2", "-", 12.0, (), EDGE_KEY),
             PeerRow("edge-b", "10.77.0.3", "-", None, (), EDGE2_KEY)]
    seen = {"edge-b": 1000.0}
    rows = hub.poll(config, peers, 1300.0, asker, seen)
    a, b = rows
    assert a.status == STATUS and a.routes_in_sync and a.handshake_age_s == 12.0
    assert b.status is None and "refused" in b.error and b.last_seen == 1000.0
    assert seen == {"edge-a": 1300.0, "edge-b": 1000.0}
    text = hub.lines(rows, 1300.0)
    assert all(len(line) <= 80 for line in text), text
    assert any("NO ANSWER" in line and "last answered 5 min ago" in line for line in text)
    assert b.as_json(1300.0)["last_seen_age_s"] == 300.0


def test_a_lying_edge_is_shown_as_not_answering_without_its_words() -> None:
    config = fleet()
    rows = hub.poll(config, [], 1.0, lambda address, request: b'{"ok":true,"status":{"name":'
                    b'"\\u001b[2J"}}\n')
    assert all(r.status is None and "status.name" in r.error for r in rows)
    assert not any("\x1b" in line for line in hub.lines(rows, 1.0))


def test_sync_gives_each_edge_the_others_lans() -> None:
    config = fleet()
    given: dict[str, bytes] = {}

    def asker(address: str, request: bytes, timeout_s: float) -> bytes:
        assert timeout_s == hub.ROUTES_TIMEOUT_S  # the edge answers once applied
        given[address] = request
        return wire.routes_reply(wire.parse_request(request).routes)

    results = hub.sync(config, asker)
    assert [(r.name, r.routes, r.error) for r in results] == [
        ("edge-a", ("192.168.78.0/24",), ""), ("edge-b", ("192.168.77.0/24",), "")]


def test_an_edge_runs_its_agent_for_its_hub_and_opens_the_port_to_it_alone() -> None:
    _, grant = settle.hub_admit(hub_config(), EdgeOffer("edge-a", EDGE_KEY, "192.168.77.0/24",
                                                        "x"), HUB_KEY)
    edge = model_from_config(settle.edge_join(edge_config(), grant, "203.0.113.2"))
    argv = agent_argv(edge)
    assert argv[argv.index("--listen") + 1] == "10.77.0.2"
    assert argv[argv.index("--hub") + 1] == "10.77.0.1"
    assert argv[argv.index("--device") + 1] == "wg0"
    ruleset = nft.render_ruleset(edge)
    assert 'iifname "wg0" ip saddr 10.77.0.1 tcp dport 9587 accept' in ruleset
    # the hub itself answers no one
    assert agent_argv(model_from_config(fleet())) is None
    assert "9587" not in nft.render_ruleset(model_from_config(fleet()))


def test_doctor_says_whether_the_agent_answers_the_hub() -> None:
    from keel.doctor.checks import FAIL, INFO, OK
    from keel.doctor.fleet import check_fleet_agent

    _, grant = settle.hub_admit(hub_config(), EdgeOffer("edge-a", EDGE_KEY, "192.168.77.0/24",
                                                        "x"), HUB_KEY)
    edge = model_from_config(settle.edge_join(edge_config(), grant, "203.0.113.2"))
    assert check_fleet_agent(edge, True).status == OK
    down = check_fleet_agent(edge, False)
    assert down.status == FAIL and "10.77.0.1" in down.detail
    assert check_fleet_agent(model_from_config(fleet()), False).status == INFO
