"""A port set up or down (IFF_UP, what `ip link set X up` sets), for the
setup wizard's cable watch alone: a port keel has not set up has no
carrier to read (sysfs refuses it), so the watch sets such ports up while
it watches, with no address, and down again after. Through the
SIOCGIFFLAGS/SIOCSIFFLAGS ioctls (no process); root only: anything else,
or a name that is no NIC, is False, never an exception."""

from __future__ import annotations

import fcntl
import socket
import struct
from collections.abc import Callable

SIOCGIFFLAGS, SIOCSIFFLAGS = 0x8913, 0x8914
IFF_UP = 0x1
IFNAMSIZ = 16
IFREQ = "16sH22x"  # struct ifreq: the name, then ifr_flags in a 24-byte union

Ioctl = Callable[[int, int, bytes], bytes]


def _ioctl(fd: int, request: int, arg: bytes) -> bytes:
    return fcntl.ioctl(fd, request, arg)


def set_up(name: str, up: bool, ioctl: Ioctl = _ioctl) -> bool:
    """Set the port `name` up (or down); whether it is so now."""
    encoded = name.encode()
    if not encoded or len(encoded) >= IFNAMSIZ or b"/" in encoded:
        return False
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            reply = ioctl(s.fileno(), SIOCGIFFLAGS, struct.pack(IFREQ, encoded, 0))
            flags = struct.unpack(IFREQ, reply[:struct.calcsize(IFREQ)])[1]
            wanted = flags | IFF_UP if up else flags & ~IFF_UP
            if wanted != flags:
                ioctl(s.fileno(), SIOCSIFFLAGS, struct.pack(IFREQ, encoded, wanted))
    except (OSError, struct.error):
        return False
    return True
