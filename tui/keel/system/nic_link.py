"""A port set up or down (IFF_UP, what `ip link set X up` sets), for the
setup wizard's cable watch alone: a port keel has not set up has no
carrier to read (sysfs refuses it), so the watch sets such ports up while
it watches, with no address, and down again after. Through the
SIOCGIFFLAGS/SIOCSIFFLAGS ioctls (no process); root only: anything else,
or a name that is no NIC, is False, never an exception.

A port raised for the watch sends nothing: IPv6 is off on it before it goes
up (no link-local address, no DAD, MLD or router solicitation on a cable
the user has not given a role yet), and on again, as the kernel has it by
default, once it is down (keel apply sets what its config says later)."""

from __future__ import annotations

import fcntl
import socket
import struct
from collections.abc import Callable
from pathlib import Path

SIOCGIFFLAGS, SIOCSIFFLAGS = 0x8913, 0x8914
IFF_UP = 0x1
IFNAMSIZ = 16
IFREQ = "16sH22x"  # struct ifreq: the name, then ifr_flags in a 24-byte union
IPV6_CONF = Path("/proc/sys/net/ipv6/conf")

Ioctl = Callable[[int, int, bytes], bytes]


def _ioctl(fd: int, request: int, arg: bytes) -> bytes:
    return fcntl.ioctl(fd, request, arg)


def _ipv6(name: str, on: bool, conf: Path) -> None:
    """IPv6 on or off on `name` (its disable_ipv6); a port without the knob
    (no IPv6 in the kernel) is left as it is."""
    knob = conf / name / "disable_ipv6"
    if knob.is_file():
        knob.write_text("0\n" if on else "1\n")


def set_up(name: str, up: bool, ioctl: Ioctl = _ioctl, conf: Path = IPV6_CONF) -> bool:
    """Set the port `name` up (or down); whether it is so now. A port that
    goes up here has IPv6 off first; one that goes down has it on after."""
    encoded = name.encode()
    if not encoded or len(encoded) >= IFNAMSIZ or b"/" in encoded or name in (".", ".."):
        return False
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            reply = ioctl(s.fileno(), SIOCGIFFLAGS, struct.pack(IFREQ, encoded, 0))
            flags = struct.unpack(IFREQ, reply[:struct.calcsize(IFREQ)])[1]
            wanted = flags | IFF_UP if up else flags & ~IFF_UP
            if wanted != flags:
                if up:
                    _ipv6(name, False, conf)
                ioctl(s.fileno(), SIOCSIFFLAGS, struct.pack(IFREQ, encoded, wanted))
                if not up:
                    _ipv6(name, True, conf)
    except (OSError, struct.error):
        return False
    return True
