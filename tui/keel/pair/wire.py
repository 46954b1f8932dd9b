"""Frames on the pairing connection: a 4-byte length, a 1-byte kind, the
payload. At most MAX_FRAME bytes: a longer one ends the session before it
is read. Every read has a deadline."""

from __future__ import annotations

import socket
import struct
import time

from keel.pair.errors import PairError

MAX_FRAME = 16 * 1024
HELLO, SEALED, NOTE = b"h", b"m", b"e"  # SPAKE2 message, AEAD message, plain error note
KINDS = (HELLO, SEALED, NOTE)
_HEAD = struct.Struct(">IB")


class Frames:
    """Frames over a connected stream socket; `step_s` bounds each read."""

    def __init__(self, sock: socket.socket, step_s: float = 30.0) -> None:
        self.sock = sock
        self.step_s = step_s

    def send(self, kind: bytes, payload: bytes) -> None:
        if len(payload) + 1 > MAX_FRAME:
            raise PairError(f"a message of {len(payload) + 1} bytes: at most {MAX_FRAME}")
        try:
            self.sock.sendall(_HEAD.pack(len(payload) + 1, kind[0]) + payload)
        except OSError as err:
            raise PairError(f"the connection was cut mid-way ({err.strerror or err})") from None

    def receive(self) -> tuple[bytes, bytes]:
        """(kind, payload) of the next frame."""
        deadline = time.monotonic() + self.step_s
        length, kind = _HEAD.unpack(self._exactly(_HEAD.size, deadline))
        if length > MAX_FRAME:
            raise PairError(f"a message of {length} bytes: at most {MAX_FRAME}")
        if length < 1 or bytes([kind]) not in KINDS:
            raise PairError("a malformed message (not a keel pairing frame)")
        return bytes([kind]), self._exactly(length - 1, deadline)

    def _exactly(self, n: int, deadline: float) -> bytes:
        data = bytearray()
        while len(data) < n:
            left = deadline - time.monotonic()
            if left <= 0:
                raise PairError(f"no message from the other side within {self.step_s:.0f} s")
            self.sock.settimeout(left)
            try:
                chunk = self.sock.recv(n - len(data))
            except TimeoutError:
                continue
            except OSError as err:
                raise PairError(f"the connection was cut mid-way ({err.strerror or err})") \
                    from None
            if not chunk:
                raise PairError("the connection was cut mid-way (closed by the other side)")
            data += chunk
        return bytes(data)
