"""OpenSSH public keys, one authorized_keys line each: checked, and shown as
type + fingerprint (SHA256, as `ssh-keygen -l` prints it)."""

from __future__ import annotations

import base64
import binascii
import hashlib
import struct
from dataclasses import dataclass

TYPES = ("ssh-ed25519", "ecdsa-sha2-nistp256", "ecdsa-sha2-nistp384", "ecdsa-sha2-nistp521",
         "ssh-rsa", "sk-ssh-ed25519@openssh.com", "sk-ecdsa-sha2-nistp256@openssh.com")
MAX_LINE = 16384


@dataclass(frozen=True)
class SshKey:
    type: str
    blob: bytes
    comment: str

    @property
    def fingerprint(self) -> str:
        digest = base64.b64encode(hashlib.sha256(self.blob).digest()).decode().rstrip("=")
        return f"SHA256:{digest}"

    @property
    def line(self) -> str:
        """The authorized_keys line (options are never kept)."""
        text = f"{self.type} {base64.b64encode(self.blob).decode()}"
        return f"{text} {self.comment}" if self.comment else text

    def describe(self) -> str:
        return f"{self.type} {self.fingerprint}" + (f" {self.comment}" if self.comment else "")


def parse_public_key(text: str) -> SshKey:
    """One public key line: TYPE BASE64 [COMMENT]; ValueError says what is wrong."""
    line = text.strip()
    if not line:
        raise ValueError("empty: paste one public key line (ssh-ed25519 AAAA... comment)")
    if len(line) > MAX_LINE or "\n" in line:
        raise ValueError("one public key line, please (not a file)")
    if "PRIVATE KEY" in line:
        raise ValueError("that is a private key: paste the .pub file's line, and keep "
                         "the private key to yourself")
    parts = line.split(None, 2)
    if parts[0] not in TYPES:
        raise ValueError(f"not an SSH public key type: {parts[0][:40]!r} (expected one of "
                         + ", ".join(TYPES[:5]) + ")")
    if len(parts) < 2:
        raise ValueError("the key's base64 part is missing")
    try:
        blob = base64.b64decode(parts[1], validate=True)
    except (binascii.Error, ValueError):
        raise ValueError("the key's base64 part is damaged") from None
    if len(blob) < 4:
        raise ValueError("the key is too short")
    (n,) = struct.unpack(">I", blob[:4])
    if blob[4:4 + n].decode("ascii", "replace") != parts[0]:
        raise ValueError(f"the key's data is not a {parts[0]} key")
    comment = parts[2].strip() if len(parts) > 2 else ""
    return SshKey(parts[0], blob, comment)
