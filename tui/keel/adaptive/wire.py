"""keel's delay probe on the wire: a UDP datagram through the tunnel to the
peer's reflector (UDP PORT on its tunnel address, accepted from the tunnel
only), answered with the peer's clock at the probe's arrival and at the
answer, and how late the peer's own CPU was given back just before (its stall
meter's worst lateness over the last few tenths of a second).

    probe   MAGIC "KLP1" | kind 1 | 3 zero bytes | seq u32 | sent ns u64      = 20 bytes
    answer  MAGIC "KLP1" | kind 2 | 3 zero bytes | seq u32 | sent ns u64
            | received ns u64 | answered ns u64 | peer stall ms u16 | 2 zero bytes = 40 bytes

Times are CLOCK_REALTIME nanoseconds (chrony keeps both ends near each
other; a per-direction baseline cancels what is left). Datagrams come from
the network: both parsers are strict (exact length, magic, kind, zero bytes,
times within a day of each other) and raise WireError naming what is wrong."""

from __future__ import annotations

import struct
from dataclasses import dataclass

PORT = 51821
MAGIC = b"KLP1"
PROBE, ANSWER = 1, 2
_PROBE = struct.Struct("!4sB3sIQ")
_ANSWER = struct.Struct("!4sB3sIQQQHH")
PROBE_LEN, ANSWER_LEN = _PROBE.size, _ANSWER.size
DAY_NS = 86_400 * 10**9
MAX_STALL_MS = 0xFFFF


class WireError(ValueError):
    """A datagram that is not a well-formed keel probe or answer."""


@dataclass(frozen=True)
class Probe:
    seq: int
    sent_ns: int


@dataclass(frozen=True)
class Answer:
    seq: int
    sent_ns: int  # our clock, echoed
    received_ns: int  # the peer's clock
    answered_ns: int  # the peer's clock
    peer_stall_ms: int

    def one_way_ms(self, arrived_ns: int) -> tuple[float, float]:
        """(up, down): here -> peer and peer -> here, in ms, each holding the
        clocks' offset (with opposite signs)."""
        return ((self.received_ns - self.sent_ns) / 1e6, (arrived_ns - self.answered_ns) / 1e6)


def _head(data: bytes, length: int, kind: int) -> None:
    if not isinstance(data, bytes | bytearray):
        raise WireError("not bytes")
    if len(data) != length:
        raise WireError(f"{len(data)} bytes: a keel {'probe' if kind == PROBE else 'answer'} "
                        f"has {length}")
    if bytes(data[:4]) != MAGIC:
        raise WireError("not a keel probe (no KLP1 magic)")
    if data[4] != kind:
        raise WireError(f"kind {data[4]}, expected {kind}")
    if bytes(data[5:8]) != b"\0\0\0":
        raise WireError("reserved bytes are not zero")


def probe(seq: int, sent_ns: int) -> bytes:
    return _PROBE.pack(MAGIC, PROBE, b"\0\0\0", seq & 0xFFFFFFFF, sent_ns)


def parse_probe(data: bytes) -> Probe:
    _head(data, PROBE_LEN, PROBE)
    _, _, _, seq, sent = _PROBE.unpack(bytes(data))
    return Probe(seq, sent)


def answer(p: Probe, received_ns: int, answered_ns: int, stall_ms: float) -> bytes:
    stall = int(min(max(stall_ms, 0.0), MAX_STALL_MS))
    return _ANSWER.pack(MAGIC, ANSWER, b"\0\0\0", p.seq, p.sent_ns, received_ns,
                        answered_ns, stall, 0)


def parse_answer(data: bytes) -> Answer:
    _head(data, ANSWER_LEN, ANSWER)
    _, _, _, seq, sent, received, answered, stall, zero = _ANSWER.unpack(bytes(data))
    if zero:
        raise WireError("reserved bytes are not zero")
    if answered < received:
        raise WireError("answered before it was received")
    if abs(received - sent) > DAY_NS or answered - received > DAY_NS:
        raise WireError("the clocks are more than a day apart")
    return Answer(seq, sent, received, answered, stall)
