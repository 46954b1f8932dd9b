"""keel's delay probe on the wire (keel.adaptive.wire): what is sent, and the
strict reading of datagrams from the tunnel."""

from __future__ import annotations

import contextlib
import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from keel.adaptive.wire import (
    ANSWER_LEN,
    PROBE_LEN,
    Answer,
    Probe,
    WireError,
    answer,
    parse_answer,
    parse_probe,
    probe,
)

SENT = 1_764_000_000_123_456_789


def test_a_probe_round_trips() -> None:
    data = probe(7, SENT)
    assert len(data) == PROBE_LEN == 20
    assert data[:8] == b"KLP1\x01\0\0\0"
    assert parse_probe(data) == Probe(7, SENT)


def test_an_answer_round_trips_with_one_way_delays() -> None:
    data = answer(Probe(7, SENT), SENT + 12_000_000, SENT + 12_500_000, 3.7)
    assert len(data) == ANSWER_LEN == 40
    got = parse_answer(data)
    assert got == Answer(7, SENT, SENT + 12_000_000, SENT + 12_500_000, 3)
    up, down = got.one_way_ms(SENT + 20_500_000)
    assert (up, down) == (12.0, 8.0)


def test_a_stall_too_long_for_the_field_is_capped() -> None:
    assert parse_answer(answer(Probe(1, SENT), SENT, SENT, 1e9)).peer_stall_ms == 0xFFFF


@pytest.mark.parametrize(("data", "message"), [
    (b"", "0 bytes: a keel probe has 20"),
    (probe(1, SENT) + b"x", "21 bytes"),
    (b"KLP2" + probe(1, SENT)[4:], "no KLP1 magic"),
    (probe(1, SENT)[:4] + b"\x02" + probe(1, SENT)[5:], "kind 2, expected 1"),
    (probe(1, SENT)[:5] + b"\x00\x01\x00" + probe(1, SENT)[8:], "reserved bytes"),
])
def test_bad_probes_are_named(data: bytes, message: str) -> None:
    with pytest.raises(WireError, match=message):
        parse_probe(data)


def test_an_answer_sent_before_it_arrived_is_refused() -> None:
    data = struct.pack("!4sB3sIQQQHH", b"KLP1", 2, b"\0\0\0", 1, SENT, SENT + 10, SENT, 0, 0)
    with pytest.raises(WireError, match="answered before it was received"):
        parse_answer(data)


def test_clocks_a_day_apart_are_refused() -> None:
    far = SENT + 2 * 86_400 * 10**9
    data = struct.pack("!4sB3sIQQQHH", b"KLP1", 2, b"\0\0\0", 1, SENT, far, far, 0, 0)
    with pytest.raises(WireError, match="more than a day apart"):
        parse_answer(data)


def test_a_probe_is_not_an_answer() -> None:
    with pytest.raises(WireError, match="20 bytes: a keel answer has 40"):
        parse_answer(probe(1, SENT))


@settings(max_examples=800)
@given(st.binary(max_size=64))
def test_any_datagram_is_a_probe_an_answer_or_a_wire_error(data: bytes) -> None:
    for parse in (parse_probe, parse_answer):
        with contextlib.suppress(WireError):
            parse(data)


@settings(max_examples=800)
@given(st.integers(0, ANSWER_LEN - 1), st.integers(0, 255))
def test_a_changed_byte_reads_as_an_answer_or_is_refused(where: int, value: int) -> None:
    data = bytearray(answer(Probe(9, SENT), SENT + 5_000_000, SENT + 6_000_000, 0))
    data[where] = value
    try:
        got = parse_answer(bytes(data))
    except WireError:
        return
    assert got.answered_ns >= got.received_ns
