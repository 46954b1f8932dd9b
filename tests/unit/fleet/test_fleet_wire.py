"""The fleet channel's messages (keel.fleet.wire): what each side sends, read
back whole; and bytes from the other side, whatever they are, read as a
message or refused with WireError naming the field in one printable line
(never another exception; of the bytes, at most an unknown key's name, escaped)."""

from __future__ import annotations

import contextlib
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from keel.fleet import wire

STATUS = wire.Status(
    name="edge-a", version="0.1.0+g2194da6", at=1_800_000_000.5, uptime_s=3600.0, slot="A",
    last_upgrade=wire.Upgrade("kept", "0.1.0+g2194da6", "", 1_799_990_000.0),
    tunnel_p95_ms=4.2, outside_p95_ms=3.1, loss=0.0, day_p95_ms=12.5, cake_up_kbit=8000,
    cake_down_kbit=16000, verdict="the line is bloated: +180 ms under load",
    causes=("bloat",), routes=("192.168.78.0/24",))


def test_a_status_comes_back_as_it_was_sent() -> None:
    assert wire.parse_status_reply(wire.status_reply(STATUS)) == STATUS
    bare = wire.Status(name="e", version="v", at=1.0, uptime_s=2.0)
    assert wire.parse_status_reply(wire.status_reply(bare)) == bare


def test_requests_come_back_as_they_were_sent() -> None:
    assert wire.parse_request(wire.status_request()) == wire.Request("status")
    routes = ("192.168.78.0/24", "fd00:1::/64")
    assert wire.parse_request(wire.routes_request(routes)) == wire.Request("routes", routes)
    assert wire.parse_routes_reply(wire.routes_reply(routes)) == routes
    offer = wire.Offer(200 << 20, "0123456789abcdef" * 4, 180)
    assert wire.parse_request(wire.upgrade_request(offer)) == wire.Request("upgrade", offer=offer)
    assert wire.parse_installed_reply(wire.installed_reply("0.2.0", "B")) == ("0.2.0", "B")


def test_a_refusal_is_an_error_in_its_own_words() -> None:
    with pytest.raises(wire.WireError, match="the edge refused: no hub"):
        wire.parse_routes_reply(wire.refusal("no hub"))


def _status_with(**changed) -> bytes:
    body = STATUS.as_json() | changed
    return json.dumps({"ok": True, "status": body}).encode() + b"\n"


@pytest.mark.parametrize(("changed", "field"), [
    ({"name": "edge a"}, "status.name"),
    ({"name": "x" * 64}, "status.name"),
    ({"slot": "C"}, "status.slot"),
    ({"loss": 1.5}, "status.loss"),
    ({"loss": True}, "status.loss"),
    ({"tunnel_p95_ms": -1}, "status.tunnel_p95_ms"),
    ({"verdict": "bad\x1b[2Jnews"}, "status.verdict"),
    ({"verdict": "x" * 301}, "status.verdict"),
    ({"causes": ["Bloat"]}, "status.causes"),
    ({"routes": ["192.168.78.0/24; rm -rf /"]}, r"status.routes\[0\]"),
    ({"routes": ["10.0.0.0/24"] * 65}, "status.routes"),
    ({"last_upgrade": {"result": "exploded", "version": "x"}}, "last_upgrade.result"),
    ({"extra": 1}, "unknown key extra"),
])
def test_a_status_with_one_bad_field_is_refused_naming_it(changed, field) -> None:
    with pytest.raises(wire.WireError, match=field):
        wire.parse_status_reply(_status_with(**changed))


@pytest.mark.parametrize(("line", "why"), [
    (b'{"op":"status"}', "not a whole line"),
    (b'{"op":"status"}\n' + b" " * wire.MAX_REQUEST, "longer than"),
    (b"\xff\xfe\n", "not JSON"),
    (b"[1]\n", "not a JSON object"),
    (b'{"op":"reboot"}\n', "op is not"),
    (b'{"op":"status","token":"x"}\n', "unknown key token"),
    (b'{"op":"routes","routes":"10.0.0.0/8"}\n', "routes: not a list"),
    (b'{"op":"routes","routes":[NaN]}\n', "not JSON"),
    (b'{"op":"upgrade","size":5000,"sha256":"AB","tunnel_wait":180}\n', "sha256"),
    (b'{"op":"upgrade","size":5000,"sha256":"' + b"A" * 64 + b'","tunnel_wait":180}\n',
     "sha256: not 64 lowercase"),
    (b'{"op":"upgrade","size":12,"sha256":"' + b"a" * 64 + b'","tunnel_wait":180}\n',
     "size: not a whole number"),
    (b'{"op":"upgrade","size":5e9,"sha256":"' + b"a" * 64 + b'","tunnel_wait":180}\n',
     "size: not a whole number"),
    (b'{"op":"upgrade","size":true,"sha256":"' + b"a" * 64 + b'","tunnel_wait":180}\n',
     "size: not a whole number"),
    (b'{"op":"upgrade","size":5000,"sha256":"' + b"a" * 64 + b'","tunnel_wait":5}\n',
     "tunnel_wait: not a whole number in 30..3600"),
    (b'{"op":"upgrade","size":5000,"sha256":"' + b"a" * 64 + b'","tunnel_wait":180,'
     b'"allow_downgrade":true}\n', "unknown key allow_downgrade"),
])
def test_a_bad_request_is_refused_saying_what(line, why) -> None:
    with pytest.raises(wire.WireError, match=why):
        wire.parse_request(line)


JSONISH = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner,
                                                                max_size=6),
    max_leaves=20)


@settings(max_examples=400, deadline=None)
@given(st.binary(max_size=2048))
def test_any_bytes_are_a_request_or_refused(data: bytes) -> None:
    for line in (data, data + b"\n"):
        try:
            request = wire.parse_request(line)
        except wire.WireError as err:  # said in one printable line
            assert str(err).isprintable() and len(str(err)) < 200, err
        else:
            assert request.op in ("status", "routes", "upgrade")


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.sampled_from(["op", "v", "size", "sha256", "tunnel_wait", "x"]),
                       JSONISH | st.integers(0, 2 << 30) | st.sampled_from(["upgrade", "a" * 64]),
                       max_size=6))
def test_any_upgrade_offer_is_bounded_or_refused(body) -> None:
    """A hostile hub's offer: read as one within the bounds (a bundle's size,
    a SHA-256, the gate's tunnel wait), or refused."""
    try:
        request = wire.parse_request(json.dumps(body).encode() + b"\n")
    except wire.WireError:
        return
    if request.op == "upgrade":
        offer = request.offer
        assert wire.MIN_BUNDLE <= offer.size <= wire.MAX_BUNDLE
        assert wire.SHA256.fullmatch(offer.sha256)
        assert wire.TUNNEL_WAIT_S[0] <= offer.tunnel_wait <= wire.TUNNEL_WAIT_S[1]




@settings(max_examples=400, deadline=None)
@given(st.dictionaries(st.sampled_from([*sorted(wire.STATUS_KEYS), "x"]), JSONISH, max_size=12),
       st.sampled_from([True, False, None, 1]))
def test_any_reply_is_a_status_or_refused(body, ok) -> None:
    """Hostile edges: any JSON an edge may send is read as a Status whose
    texts hold no control characters, or refused."""
    line = json.dumps({"ok": ok, "status": body, "error": "e"}).encode() + b"\n"
    try:
        status = wire.parse_status_reply(line)
    except wire.WireError:
        return
    for text in (status.name, status.version, status.verdict):
        assert not any(ord(c) < 0x20 for c in text)


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=600))
def test_any_bytes_are_a_reply_or_refused(data: bytes) -> None:
    for parse in (wire.parse_status_reply, wire.parse_routes_reply, wire.parse_installed_reply):
        with contextlib.suppress(wire.WireError):
            parse(data + b"\n")
