"""One pairing session over a connection, for each side: the protocol of
keel.pair.protocol with the decisions of keel.pair.settle in between.
Nothing here touches the system: each side returns the config it is to
apply, or raises PairError (nothing changed)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from keel.config.schema import Config
from keel.pair import wire
from keel.pair.errors import PairError, PairRefused
from keel.pair.messages import EdgeOffer, HubGrant, as_message, grant_from, offer_from
from keel.pair.protocol import WRONG_CODE, Channel, KeyExchange
from keel.shown import shown

Admit = Callable[[EdgeOffer], tuple[Config, HubGrant]]
Join = Callable[[HubGrant], Config]


@dataclass(frozen=True)
class Paired:
    config: Config  # this side's new config
    offer: EdgeOffer
    grant: HubGrant


def _expect(frames: wire.Frames, kind: bytes) -> bytes:
    got, payload = frames.receive()
    if got == wire.NOTE:  # not authenticated: anyone who connects can send one
        note = shown(payload[:200].decode("utf-8", "replace"), limit=200)
        raise PairError(f"the other side says: {note}")
    if got != kind:
        raise PairError("a message out of order")
    return payload


def _sealed(frames: wire.Frames, channel: Channel, wrong: str | None = None) -> dict:
    payload = _expect(frames, wire.SEALED)
    return channel.open(payload, wrong) if wrong else channel.open(payload)


def _refusal(message: dict) -> None:
    if "refused" in message:
        why = message["refused"]
        raise PairRefused("the other side refused: "
                          f"{shown(why, limit=300) if isinstance(why, str) else '?'}")


def hub_session(frames: wire.Frames, code: str, admit: Admit) -> Paired:
    """The hub's side, once an edge has connected."""
    exchange = KeyExchange(code, edge=False)
    mine = exchange.hello()
    try:
        channel = exchange.finish(_expect(frames, wire.HELLO))
    except PairError as err:
        raise PairError(f"{err}, before any key exchange: perhaps not the edge (a port "
                        "scanner, a stray client); the code is used up and the port "
                        "closed: run keel pair again for a new code") from None
    frames.send(wire.HELLO, mine)
    try:
        offer = offer_from(_sealed(frames, channel, WRONG_CODE))
    except PairError as err:
        if str(err) == WRONG_CODE:
            frames.send(wire.NOTE, b"wrong code: it is used up; ask for a new one")
        raise
    try:
        config, grant = admit(offer)
    except PairRefused as err:
        frames.send(wire.SEALED, channel.seal({"refused": str(err)}))
        raise
    frames.send(wire.SEALED, channel.seal(as_message(grant)))
    answer = _sealed(frames, channel)
    _refusal(answer)
    if answer != {"accept": True}:
        raise PairError("a malformed answer from the edge")
    return Paired(config, offer, grant)


def edge_session(frames: wire.Frames, code: str, offer: EdgeOffer, join: Join) -> Paired:
    """The edge's side, connected to the hub."""
    exchange = KeyExchange(code, edge=True)
    try:
        frames.send(wire.HELLO, exchange.hello())
        hello = _expect(frames, wire.HELLO)
    except PairError as err:
        if "cut mid-way" not in str(err):
            raise
        raise PairError(f"{err}, before the key exchange: the hub is not waiting: ask for "
                        "a new code") from None
    channel = exchange.finish(hello)
    frames.send(wire.SEALED, channel.seal(as_message(offer)))
    message = _sealed(frames, channel, WRONG_CODE)
    _refusal(message)
    grant = grant_from(message)
    try:
        config = join(grant)
    except PairRefused as err:
        frames.send(wire.SEALED, channel.seal({"refused": str(err)}))
        raise
    frames.send(wire.SEALED, channel.seal({"accept": True}))
    return Paired(config, offer, grant)
