"""ICMP timestamp probes: the request we send, and the strict reading of
replies (bytes from the network). The captures are real: a request to
127.0.0.1 on a Linux host read back from a raw ICMP socket, which sees our
own request first and then the kernel's reply."""

from __future__ import annotations

import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from keel.adaptive.icmpts import (
    DAY_MS,
    ProbeError,
    Reply,
    checksum,
    ms_of_day,
    one_way,
    parse_reply,
    request,
)

IDENT = 0x4B31
# captured on the host (Linux 6.x): our request, then the kernel's reply
OWN_REQUEST = bytes.fromhex("450000281067400040012c6c7f0000017f000001"
                            "0d0009f04b31000701f39be40000000000000000")
KERNEL_REPLY = bytes.fromhex("450000281068000040016c6b7f0000017f000001"
                             "0e00cd3e4b31000701f39be401f39be501f39be5")


def test_the_kernels_reply_is_read() -> None:
    assert parse_reply(KERNEL_REPLY, IDENT) == Reply(7, 32742372, 32742373, 32742373)


def test_our_request_is_what_was_sent() -> None:
    assert request(IDENT, 7, 32742372) == OWN_REQUEST[20:]


def test_our_own_request_read_back_is_not_a_reply() -> None:
    with pytest.raises(ProbeError, match="type 13 code 0, not a timestamp reply"):
        parse_reply(OWN_REQUEST, IDENT)


def test_another_identifier_is_not_ours() -> None:
    with pytest.raises(ProbeError, match="identifier 19249, ours is 1"):
        parse_reply(KERNEL_REPLY, 1)


def test_a_flipped_bit_fails_the_checksum() -> None:
    bad = bytearray(KERNEL_REPLY)
    bad[-1] ^= 0x01
    with pytest.raises(ProbeError, match="bad ICMP checksum"):
        parse_reply(bytes(bad), IDENT)


def test_a_clock_not_in_utc_is_refused() -> None:
    icmp = bytearray(KERNEL_REPLY[20:])
    icmp[12:16] = struct.pack("!I", 0x80000000 | 5)
    icmp[2:4] = b"\0\0"
    icmp[2:4] = struct.pack("!H", checksum(bytes(icmp)))
    with pytest.raises(ProbeError, match="receive time 2147483653: not milliseconds"):
        parse_reply(KERNEL_REPLY[:20] + bytes(icmp), IDENT)


@pytest.mark.parametrize("cut", [0, 19, 39])
def test_short_packets_are_refused(cut: int) -> None:
    with pytest.raises(ProbeError):
        parse_reply(KERNEL_REPLY[:cut], IDENT)


def test_one_way_delays_across_midnight() -> None:
    reply = Reply(1, DAY_MS - 5, 3, 4)  # sent 5 ms before midnight, got 3 ms after
    up, down = one_way(reply, 10.5)
    assert (up, down) == (8, 6.5)


def test_ms_of_day() -> None:
    assert ms_of_day(86_400.0 * 20_000 + 1.25) == 1250


def test_request_arguments_are_bounded() -> None:
    with pytest.raises(ValueError):
        request(IDENT, 1, DAY_MS)
    with pytest.raises(ValueError):
        request(0x10000, 1, 0)


@settings(max_examples=600)
@given(st.binary(max_size=200))
def test_any_bytes_give_a_reply_or_probe_error(data: bytes) -> None:
    try:
        reply = parse_reply(data, IDENT)
    except ProbeError:
        return
    assert all(0 <= t < DAY_MS for t in (reply.originate, reply.receive, reply.transmit))


@settings(max_examples=600)
@given(st.integers(0, 39), st.integers(0, 255))
def test_any_one_byte_changed_in_the_reply_is_read_or_refused(where: int, value: int) -> None:
    data = bytearray(KERNEL_REPLY)
    data[where] = value
    try:
        reply = parse_reply(bytes(data), IDENT)
    except ProbeError:
        return
    # what still reads is the reply (a change in the IP header's unchecked
    # fields) or a reply whose checksum still holds
    assert checksum(bytes(data[20:])) == 0 and reply.seq >= 0
