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
])
def test_a_bad_request_is_refused_saying_what(line, why) -> None:
    with pytest.raises(wire.WireError, match=why):
        wire.parse_request(line)


@settings(max_examples=400, deadline=None)
@given(st.binary(max_size=2048))
def test_any_bytes_are_a_request_or_refused(data: bytes) -> None:
    for line in (data, data + b"\n"):
        try:
            request = wire.parse_request(line)
        except wire.WireError as err:  # said in one printable line
            assert str(err).isprintable() and len(str(err)) < 200, err
        else:
            assert request.op in ("status", "routes")


JSONISH = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner,
                                                                max_size=6),
    max_leaves=20)


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
    for parse in (wire.parse_status_reply, wire.parse_routes_reply):
        with contextlib.suppress(wire.WireError):
            parse(data + b"\n")
