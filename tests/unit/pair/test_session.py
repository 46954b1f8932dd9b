"""The pairing protocol end to end over a socket pair, and every fault the
issue names: each ends the session with one line, and neither side has a
config to apply (the hub's admit is not even asked on a wrong code)."""

from __future__ import annotations

import socket
import struct
import threading
from collections.abc import Callable
from typing import Any

import pytest

from keel.pair import settle, wire
from keel.pair.errors import PairError, PairRefused
from keel.pair.messages import EdgeOffer
from keel.pair.protocol import KeyExchange
from keel.pair.session import Paired, edge_session, hub_session
from tests.unit.pair.conftest import EDGE2_KEY, EDGE_KEY, HUB_KEY, hub_config

CODE = "48210937"
OFFER = EdgeOffer(name="edge", public_key=EDGE_KEY, lan="192.168.77.0/24",
                  hub_address="203.0.113.2")


def _in_thread(fn: Callable[[], Any]) -> tuple[threading.Thread, dict[str, Any]]:
    out: dict[str, Any] = {}

    def body() -> None:
        try:
            out["result"] = fn()
        except Exception as err:  # handed to the test
            out["error"] = err

    t = threading.Thread(target=body, daemon=True)
    t.start()
    return t, out


class Admit:
    """The hub's decision, counted."""

    def __init__(self, config=None) -> None:
        self.calls = 0
        self.config = config or hub_config()

    def __call__(self, offer):
        self.calls += 1
        return settle.hub_admit(self.config, offer, HUB_KEY)


def pair(edge_code: str = CODE, hub_code: str = CODE, offer: EdgeOffer = OFFER,
         admit: Admit | None = None, join=None, step_s: float = 5.0):
    admit = admit or Admit()
    join = join or (lambda grant: settle.edge_join(
        __import__("tests.unit.pair.conftest", fromlist=["x"]).edge_config(), grant,
        "203.0.113.2"))
    a, b = socket.socketpair()
    hub_thread, hub = _in_thread(lambda: hub_session(wire.Frames(a, step_s), hub_code, admit))
    try:
        edge: dict[str, Any] = {}
        try:
            edge["result"] = edge_session(wire.Frames(b, step_s), edge_code, offer, join)
        except PairError as err:
            edge["error"] = err
        b.close()
        hub_thread.join(10)
    finally:
        a.close()
    return hub, edge, admit


def test_both_sides_settle_the_same_facts():
    hub, edge, _ = pair()
    h, e = hub["result"], edge["result"]
    assert isinstance(h, Paired) and isinstance(e, Paired)
    assert h.grant == e.grant and h.offer == e.offer == OFFER
    assert e.grant.public_key == HUB_KEY and e.grant.tunnel_address == "10.77.0.2/24"
    (peer,) = h.config.wireguard.peer
    assert (peer.public_key, peer.allowed_ips, peer.name) == (
        EDGE_KEY, ("10.77.0.2/32", "192.168.77.0/24"), "edge")
    assert h.config.wireguard.prefixes == ("192.168.77.0/24",)
    (hub_peer,) = e.config.wireguard.peer
    assert (hub_peer.endpoint, hub_peer.keepalive, hub_peer.name) == (
        "203.0.113.2:51820", 25, "hub")
    assert e.config.wireguard.enabled and e.config.wireguard.address == ("10.77.0.2/24",)


def test_a_wrong_code_ends_both_sides_and_the_hub_admits_nothing():
    hub, edge, admit = pair(edge_code="48210938")
    assert "wrong code" in str(hub["error"]) and "used up" in str(hub["error"])
    assert "wrong code" in str(edge["error"])
    assert admit.calls == 0
    assert CODE not in str(hub["error"]) + str(edge["error"])


def test_the_hubs_tunnel_prefix_full_is_said_to_both():
    full = hub_config("10.77.0.1/30")  # one address to hand out
    full = settle.hub_admit(full, EdgeOffer("other", EDGE2_KEY, None, "x"), HUB_KEY)[0]
    hub, edge, _ = pair(admit=Admit(full))
    assert isinstance(hub["error"], PairRefused) and "10.77.0.0/30 is full" in str(hub["error"])
    assert "refused" in str(edge["error"]) and "is full" in str(edge["error"])


def test_an_edge_whose_lan_overlaps_another_peers_is_refused():
    first = settle.hub_admit(hub_config(), EdgeOffer("edge-a", EDGE2_KEY, "192.168.77.0/24",
                                                     "x"), HUB_KEY)[0]
    hub, edge, _ = pair(admit=Admit(first))
    assert "overlaps peer 'edge-a' (192.168.77.0/24)" in str(hub["error"])
    assert "overlaps" in str(edge["error"])


def test_an_edge_that_cannot_take_the_grant_refuses_and_the_hub_keeps_nothing():
    def join(grant):
        raise PairRefused("the hub's routes overlap this router's LAN")

    hub, edge, _ = pair(join=join)
    assert "the other side refused" in str(hub["error"])
    assert "result" not in hub and "result" not in edge


def _hub_alone(frames_to_send: list[tuple[bytes, bytes]], code: str = CODE,
               raw: bytes = b"", step_s: float = 2.0) -> tuple[PairError, Admit]:
    """A hub session fed what a test writes on the other end."""
    a, b = socket.socketpair()
    admit = Admit()
    t, out = _in_thread(lambda: hub_session(wire.Frames(a, step_s), code, admit))
    sender = wire.Frames(b)
    for kind, payload in frames_to_send:
        sender.send(kind, payload)
    if raw:
        b.sendall(raw)
    t.join(10)
    b.close()
    a.close()
    return out.get("error"), admit


def test_a_message_too_big_ends_the_session_before_it_is_read():
    err, admit = _hub_alone([], raw=struct.pack(">IB", 10 * 1024 * 1024, ord("h")))
    assert "at most 16384" in str(err) and admit.calls == 0


@pytest.mark.parametrize("raw, why", [
    (struct.pack(">IB", 5, ord("z")) + b"abcd", "not a keel pairing frame"),
    (struct.pack(">IB", 5, ord("h")) + b"abcd", "does not speak keel pairing"),
    (struct.pack(">IB", 13, ord("h")) + b"keel-pair/1 x", "malformed key-exchange"),
    (b"GET / HTTP/1.1\r\n\r\n", "at most 16384"),  # a stray web client
])
def test_malformed_messages_end_the_session(raw, why):
    err, admit = _hub_alone([], raw=raw)
    assert why in str(err) and admit.calls == 0


def test_a_connection_cut_mid_way():
    a, b = socket.socketpair()
    t, out = _in_thread(lambda: hub_session(wire.Frames(a, 2.0), CODE, Admit()))
    exchange = KeyExchange(CODE, edge=True)
    wire.Frames(b).send(wire.HELLO, exchange.hello())
    wire.Frames(b).receive()
    b.close()  # before the offer
    t.join(10)
    a.close()
    assert "cut mid-way" in str(out["error"])


def test_silence_times_out():
    a, b = socket.socketpair()
    t, out = _in_thread(lambda: hub_session(wire.Frames(a, 0.3), CODE, Admit()))
    t.join(10)
    a.close()
    b.close()
    assert "within 0 s" in str(out["error"]) or "no message" in str(out["error"])


def test_a_replayed_transcript_does_not_open_in_a_new_session():
    """An eavesdropper records the edge's frames of a good session and plays
    them to the hub's next session (even with the same code): the hub's
    fresh SPAKE2 share gives another key, so the offer does not open."""
    recorded: list[tuple[bytes, bytes]] = []

    class Tap(wire.Frames):
        def send(self, kind: bytes, payload: bytes) -> None:
            recorded.append((kind, payload))
            super().send(kind, payload)

    a, b = socket.socketpair()
    t, hub = _in_thread(lambda: hub_session(wire.Frames(a, 5), CODE, Admit()))
    edge_session(Tap(b, 5), CODE, OFFER,
                 lambda g: settle.edge_join(
                     __import__("tests.unit.pair.conftest", fromlist=["x"]).edge_config(),
                     g, "203.0.113.2"))
    t.join(10)
    a.close()
    b.close()
    assert "result" in hub and len(recorded) == 3
    err, admit = _hub_alone(recorded)
    assert "wrong code" in str(err) and admit.calls == 0


def test_every_frame_is_bound_to_the_transcript():
    """A sealed frame opens only at its place in its own session."""
    edge, hub = KeyExchange(CODE, edge=True), KeyExchange(CODE, edge=False)
    e_hello, h_hello = edge.hello(), hub.hello()
    ce, ch = edge.finish(h_hello), hub.finish(e_hello)
    first, second = ce.seal({"n": 1}), ce.seal({"n": 2})
    with pytest.raises(PairError):
        ch.open(second)  # out of order
    assert ch.open(first) == {"n": 1}
    with pytest.raises(PairError):
        ch.open(first)  # again


# --- issue 25: what the other side sends is hostile -----------------------------------
def test_a_strangers_note_reaches_the_hubs_console_escaped():
    """Item 7: an unauthenticated note (`e` frame) from whoever connects."""
    err, admit = _hub_alone([(wire.NOTE, b"\x1b[2J\x1b]0;owned\x07 hello\r\nkeel: paired")])
    text = str(err)
    assert "\\x1b[2J\\x1b]0;owned\\x07 hello\\x0d\\x0akeel: paired" in text
    assert not any(ord(ch) < 32 for ch in text) and admit.calls == 0


def test_a_refusal_reaches_the_edges_console_escaped():
    class Refusing(Admit):
        def __call__(self, offer):
            raise PairRefused("\x1b[2Jno\u202e\x9b31m")

    _, edge, _ = pair(admit=Refusing())
    text = str(edge["error"])
    assert text.startswith("the other side refused: ") and "\\x1b[2Jno\\u202e\\x9b31m" in text
    assert "\x1b" not in text and "\u202e" not in text and "\x9b" not in text


def _hub_answering(answer: Callable[[Any], bytes]):
    """An authenticated hub (it knows the code) whose grant frame is
    `answer(channel)`; the edge's session against it."""
    a, b = socket.socketpair()

    def hub() -> None:
        frames = wire.Frames(a, 5)
        exchange = KeyExchange(CODE, edge=False)
        mine = exchange.hello()
        channel = exchange.finish(frames.receive()[1])
        frames.send(wire.HELLO, mine)
        channel.open(frames.receive()[1])
        frames.send(wire.SEALED, answer(channel))

    t, _ = _in_thread(hub)
    joined: list[Any] = []
    try:
        edge_session(wire.Frames(b, 5), CODE, OFFER, joined.append)
    finally:
        t.join(10)
        a.close()
        b.close()
    return joined


def test_deeply_nested_json_from_the_hub_ends_in_one_line():
    """Item 8: was a RecursionError traceback."""
    def nested(channel):
        import json as _json

        channel_dumps = _json.dumps
        try:  # seal takes a dict: nest the payload by hand, ~8000 levels in 16 KiB
            _json.dumps = lambda *a, **k: "[" * 7000 + "]" * 7000
            return channel.seal({})
        finally:
            _json.dumps = channel_dumps

    with pytest.raises(PairError, match="nested too deep") as err:
        _hub_answering(nested)
    assert type(err.value) is PairError


def test_a_hub_that_closes_before_the_key_exchange_is_not_waiting():
    """Item 9, the edge's side: the hub took its one attempt already."""
    a, b = socket.socketpair()
    a.close()
    with pytest.raises(PairError, match="the hub is not waiting: ask for a new code"):
        edge_session(wire.Frames(b, 2), CODE, OFFER, lambda g: None)
    b.close()


@pytest.mark.parametrize("raw", [b"", b"GET / HTTP/1.0\r\n\r\n", b"\x00" * 3])
def test_a_stranger_uses_the_code_up_and_the_hub_says_so(raw):
    """Item 9, the hub's side: a port scanner's connect, a stray client."""
    err, admit = _hub_alone([], raw=raw, step_s=0.5)
    text = str(err)
    assert "before any key exchange: perhaps not the edge" in text
    assert "the code is used up" in text and admit.calls == 0
