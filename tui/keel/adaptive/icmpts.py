"""ICMP timestamp probes (RFC 792, types 13 and 14): the peer's kernel
answers them itself, with the time it received the probe and the time it sent
the answer, in milliseconds since midnight UTC. With the probe's own send
time and its arrival back, each gives one-way delays both ways: up (here to
the peer) and down (the peer to here), each off by the same unknown clock
offset, which a per-direction baseline cancels. No daemon on the peer, no
port open: only the tunnel's peer is asked.

Replies come from the network: `parse_reply` is strict (length, IP header,
type, code, checksum, our identifier, each time below a day) and raises
ProbeError naming what is wrong."""

from __future__ import annotations

import struct
from dataclasses import dataclass

DAY_MS = 86_400_000
REQUEST, REPLY = 13, 14
ICMP_LEN = 20  # type, code, checksum, identifier, sequence, three 32-bit times
MAX_PACKET = 60 + ICMP_LEN + 64  # an IP header with options, the message, some slack


class ProbeError(ValueError):
    """A packet that is not a well-formed timestamp reply to us."""


@dataclass(frozen=True)
class Reply:
    seq: int
    originate: int  # ms of day, our clock: when we sent it
    receive: int  # ms of day, the peer's clock: when it got it
    transmit: int  # ms of day, the peer's clock: when it answered


def ms_of_day(epoch_s: float) -> int:
    """Milliseconds since midnight UTC of a wall-clock time (epoch seconds)."""
    return int(epoch_s * 1000) % DAY_MS


def checksum(data: bytes) -> int:
    """The Internet checksum (RFC 1071) of `data`."""
    if len(data) % 2:
        data += b"\0"
    total = sum(struct.unpack(f"!{len(data) // 2}H", data))
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    return ~total & 0xFFFF


def request(ident: int, seq: int, originate: int) -> bytes:
    """A timestamp request (type 13) with our send time in it."""
    if not (0 <= ident <= 0xFFFF and 0 <= seq <= 0xFFFF and 0 <= originate < DAY_MS):
        raise ValueError("identifier and sequence are 16-bit, the time ms of a day")
    body = struct.pack("!BBHHHIII", REQUEST, 0, 0, ident, seq, originate, 0, 0)
    return body[:2] + struct.pack("!H", checksum(body)) + body[4:]


def parse_reply(packet: bytes, ident: int) -> Reply:
    """The reply in a raw IPv4 packet (as a raw ICMP socket reads it)."""
    if not isinstance(packet, bytes | bytearray):
        raise ProbeError("not bytes")
    if not 20 + ICMP_LEN <= len(packet) <= MAX_PACKET:
        raise ProbeError(f"{len(packet)} bytes: not an IPv4 timestamp reply")
    version, ihl = packet[0] >> 4, (packet[0] & 0x0F) * 4
    if version != 4 or ihl < 20 or len(packet) < ihl + ICMP_LEN:
        raise ProbeError(f"IP version {version}, header {ihl} bytes: not IPv4 with a reply")
    if packet[9] != 1:
        raise ProbeError(f"IP protocol {packet[9]}, not ICMP")
    total = struct.unpack("!H", packet[2:4])[0]
    if total not in (len(packet), len(packet) - ihl):  # BSDs give the payload length
        raise ProbeError(f"IP total length {total} for {len(packet)} bytes")
    icmp = bytes(packet[ihl:ihl + ICMP_LEN])
    if len(packet) != ihl + ICMP_LEN:
        raise ProbeError(f"{len(packet) - ihl} bytes of ICMP, a timestamp reply has {ICMP_LEN}")
    kind, code, _, their_ident, seq, orig, recv, xmit = struct.unpack("!BBHHHIII", icmp)
    if kind != REPLY or code != 0:
        raise ProbeError(f"ICMP type {kind} code {code}, not a timestamp reply (14, 0)")
    if checksum(icmp) != 0:
        raise ProbeError("bad ICMP checksum")
    if their_ident != ident:
        raise ProbeError(f"identifier {their_ident}, ours is {ident}")
    for name, value in (("originate", orig), ("receive", recv), ("transmit", xmit)):
        if value >= DAY_MS:  # a clock that is not UTC sets the high bit (RFC 792)
            raise ProbeError(f"{name} time {value}: not milliseconds of a UTC day")
    return Reply(seq, orig, recv, xmit)


def _signed(ms: float) -> float:
    """A difference of ms-of-day times, across midnight: in (-half a day, half]."""
    ms %= DAY_MS
    return ms - DAY_MS if ms > DAY_MS / 2 else ms


def one_way(reply: Reply, arrival_ms: float) -> tuple[float, float]:
    """(up, down) in ms: here -> peer, and peer -> here, from the reply and our
    time of day when it arrived (ms, may have a fraction); each holds the
    clocks' offset, with opposite signs."""
    return (_signed(reply.receive - reply.originate), _signed(arrival_ms - reply.transmit))
