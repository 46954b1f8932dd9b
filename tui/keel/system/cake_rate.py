"""CAKE's rate changed in place over rtnetlink: what `tc qdisc change dev DEV
root cake bandwidth NKbit` does (RTM_NEWQDISC without CREATE or REPLACE:
CAKE reconfigures under the tree lock and keeps its queue), without a `tc`
process for every change: the adaptive controller may change a rate several
times a second, and a fork under emulation costs more than the rest of its
work."""

from __future__ import annotations

import errno
import os
import socket
import struct

RTM_NEWQDISC = 36
NLMSG_ERROR = 2
NLM_F_REQUEST, NLM_F_ACK = 0x1, 0x4
TC_H_ROOT = 0xFFFFFFFF
TCA_KIND, TCA_OPTIONS = 1, 2
NLA_F_NESTED = 0x8000
TCA_CAKE_BASE_RATE64 = 2
MAX_KBIT = 100_000_000


class CakeRateError(OSError):
    """The kernel refused the change (or there is no CAKE on the device)."""


def _attr(kind: int, payload: bytes) -> bytes:
    length = 4 + len(payload)
    return struct.pack("=HH", length, kind) + payload + b"\0" * (-length % 4)


def message(ifindex: int, kbit: int, seq: int = 1) -> bytes:
    """The RTM_NEWQDISC request that sets the root CAKE's bandwidth."""
    if not 0 < kbit <= MAX_KBIT:
        raise ValueError(f"a CAKE rate of 1..{MAX_KBIT} kbit/s, not {kbit}")
    options = _attr(TCA_CAKE_BASE_RATE64, struct.pack("=Q", kbit * 1000 // 8))
    body = (struct.pack("=BxHiIII", socket.AF_UNSPEC, 0, ifindex, 0, TC_H_ROOT, 0)
            + _attr(TCA_KIND, b"cake\0") + _attr(TCA_OPTIONS | NLA_F_NESTED, options))
    return struct.pack("=IHHII", 16 + len(body), RTM_NEWQDISC, NLM_F_REQUEST | NLM_F_ACK,
                       seq, 0) + body


def ack_error(reply: bytes, seq: int) -> int:
    """The errno in the kernel's ACK to request `seq` (0: done)."""
    while len(reply) >= 16:
        length, kind, _, got_seq, _ = struct.unpack("=IHHII", reply[:16])
        if length < 16 or length > len(reply):
            break
        if kind == NLMSG_ERROR and got_seq == seq and length >= 20:
            return -struct.unpack("=i", reply[16:20])[0]
        reply = reply[(length + 3) & ~3:]
    raise CakeRateError(errno.EPROTO, "no ACK from the kernel for the CAKE change")


class CakeRates:
    """One netlink socket for the life of the controller."""

    def __init__(self) -> None:
        self.sock = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, socket.NETLINK_ROUTE)
        self.sock.settimeout(2.0)
        self.sock.bind((0, 0))
        self.seq = 0

    def set(self, ifname: str, kbit: int) -> None:
        """Set `ifname`'s root CAKE to `kbit` kbit/s; CakeRateError if refused."""
        try:
            index = socket.if_nametoindex(ifname)
        except OSError as err:
            raise CakeRateError(errno.ENODEV, f"{ifname}: no such device") from err
        self.seq += 1
        self.sock.send(message(index, kbit, self.seq))
        code = ack_error(self.sock.recv(8192), self.seq)
        if code:
            raise CakeRateError(code, f"{ifname}: CAKE rate {kbit} kbit/s: "
                                      f"{os.strerror(code)}")

    def close(self) -> None:
        self.sock.close()
