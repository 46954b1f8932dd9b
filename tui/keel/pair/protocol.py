"""The pairing protocol, without sockets. SPAKE2 (RFC 9382; the `spake2`
package, Ed25519 group) turns the short code into a strong shared key: each
connection tests one guess of the code, and a recorded transcript gives no
way to test guesses offline. From that key, HKDF-SHA256 derives one key per
direction; every later message is sealed with ChaCha20-Poly1305 under a
counter nonce, with the hash of every frame before it as associated data,
so a message replayed, reordered, or taken from another session does not
open.

  edge -> hub   hello: VERSION + SPAKE2 message A
  hub  -> edge  hello: VERSION + SPAKE2 message B
  edge -> hub   sealed: the edge's offer      (a wrong code fails here)
  hub  -> edge  sealed: the hub's grant, or {"refused": why}
  edge -> hub   sealed: {"accept": true}, or {"refused": why}
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from spake2 import SPAKE2_A, SPAKE2_B

from keel.pair.errors import PairError

VERSION = b"keel-pair/1 "
EDGE_ID, HUB_ID = b"keel-edge", b"keel-hub"
WRONG_CODE = ("wrong code (or a message altered on the way): this code is used up; "
              "run keel pair on the hub again for a new one")


class Transcript:
    """The running hash of every frame of the session, in order."""

    def __init__(self) -> None:
        self._hash = hashlib.sha256(VERSION)

    def add(self, kind: bytes, payload: bytes) -> None:
        self._hash.update(kind + len(payload).to_bytes(4, "big") + payload)

    def digest(self) -> bytes:
        return self._hash.digest()


def _derive(key: bytes, salt: bytes, label: bytes) -> bytes:
    return HKDF(algorithm=hashes.SHA256(), length=32, salt=salt,
                info=VERSION + label).derive(key)


class Channel:
    """Both directions sealed after the key exchange."""

    def __init__(self, key: bytes, transcript: Transcript, *, edge: bool) -> None:
        salt = transcript.digest()
        to_hub, to_edge = _derive(key, salt, b"edge->hub"), _derive(key, salt, b"hub->edge")
        self._send = ChaCha20Poly1305(to_hub if edge else to_edge)
        self._receive = ChaCha20Poly1305(to_edge if edge else to_hub)
        self._transcript = transcript
        self._sent = self._received = 0

    def seal(self, message: dict[str, Any]) -> bytes:
        data = json.dumps(message, sort_keys=True, separators=(",", ":")).encode()
        frame = self._send.encrypt(self._sent.to_bytes(12, "big"), data,
                                   self._transcript.digest())
        self._sent += 1
        self._transcript.add(b"m", frame)
        return frame

    def open(self, frame: bytes, wrong: str = "a message that does not open (altered on the "
                                               "way, or replayed)") -> dict[str, Any]:
        try:
            data = self._receive.decrypt(self._received.to_bytes(12, "big"), frame,
                                         self._transcript.digest())
        except InvalidTag:
            raise PairError(wrong) from None
        self._received += 1
        self._transcript.add(b"m", frame)
        try:
            message = json.loads(data)
        except RecursionError:
            raise PairError("a malformed message (JSON nested too deep)") from None
        except ValueError:
            raise PairError("a malformed message (not JSON)") from None
        if not isinstance(message, dict):
            raise PairError("a malformed message (not an object)")
        return message


class KeyExchange:
    """One side's SPAKE2 run. `code`: the digits (keel.pair.code.normalize)."""

    def __init__(self, code: str, *, edge: bool) -> None:
        password = code.encode()
        self.edge = edge
        self._spake = (SPAKE2_A(password, idA=EDGE_ID, idB=HUB_ID) if edge
                       else SPAKE2_B(password, idA=EDGE_ID, idB=HUB_ID))
        self.transcript = Transcript()
        self._hello = b""

    def hello(self) -> bytes:
        self._hello = VERSION + self._spake.start()
        return self._hello

    def finish(self, payload: bytes) -> Channel:
        """The other side's hello -> the sealed channel."""
        if not self._hello:
            raise RuntimeError("hello() comes before finish()")
        if not payload.startswith(VERSION):
            raise PairError("the other side does not speak keel pairing version 1")
        first, second = (self._hello, payload) if self.edge else (payload, self._hello)
        self.transcript.add(b"h", first)  # the edge's hello first, on both sides
        self.transcript.add(b"h", second)
        try:
            key = self._spake.finish(payload[len(VERSION):])
        except Exception as err:  # the package raises ValueError, SPAKEError, ...
            raise PairError(f"a malformed key-exchange message ({type(err).__name__})") \
                from None
        return Channel(key, self.transcript, edge=self.edge)
