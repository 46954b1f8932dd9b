"""OpenSSH public keys, one authorized_keys line each: checked strictly, and
shown as type + fingerprint (SHA256, as `ssh-keygen -l` prints it).

A line is taken only as `TYPE BASE64 [COMMENT]`: a type dropbear knows, the
key's base64 (canonical, and the data inside it a well-formed key of that
type: its own type string, its fields, nothing after them), and a comment of
printable ASCII; fields apart by spaces; at most MAX_LINE bytes. Everything
else is refused with KeyLineError, naming what is wrong and where, and never
repeating a control character raw. Why so strict: dropbear ends an
authorized_keys line at '\\r' as well as '\\n' (so "A alice\\rB mallory" is
two keys to it, one to a laxer reader), older dropbear splits lines longer
than about 4200 bytes, and options (command=, from=) would change what a key
may do. Pure: no system access."""

from __future__ import annotations

import base64
import binascii
import hashlib
import re
from dataclasses import dataclass

from keel.secret_shape import looks_secret
from keel.shown import shown

__all__ = ["MAX_COMMENT", "MAX_LINE", "TYPES", "KeyLineError", "SshKey", "parse_public_key",
           "split_key_lines"]

TYPES = ("ssh-ed25519", "ecdsa-sha2-nistp256", "ecdsa-sha2-nistp384", "ecdsa-sha2-nistp521",
         "ssh-rsa", "sk-ssh-ed25519@openssh.com", "sk-ecdsa-sha2-nistp256@openssh.com")
# The longest key taken, RSA of 4096 bits: 536 bytes of key data, 716 of
# base64, 724 with "ssh-rsa "; the others need at most 240 (ecdsa nistp521).
# So a line of at most 1024 bytes, a comment of at most 128.
MAX_LINE = 1024
MAX_COMMENT = 128
RSA_BITS = (1024, 4096)
_EC_POINT = {"nistp256": 65, "nistp384": 97, "nistp521": 133}  # 0x04 || X || Y
_BASE64 = re.compile(r"[A-Za-z0-9+/]+={0,2}")
_FIELDS = re.compile(r"([^ ]+) +([^ ]+)(?: +(.+))?")
_TYPE_SHAPED = re.compile(r"(?:ssh|ecdsa|sk)-[a-z0-9.@-]{1,40}")  # ssh-dss, ecdsa-sha2-...


class KeyLineError(ValueError):
    """A line that is not one public key keel takes; says what is wrong."""


@dataclass(frozen=True)
class SshKey:
    type: str
    blob: bytes
    comment: str  # printable ASCII, may be empty

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
        return f"{self.type} {self.fingerprint}" + (f" {shown(self.comment)}"
                                                    if self.comment else "")


def split_key_lines(text: str) -> list[tuple[int, str]]:
    """(line number, line) of every line that is not blank, split on '\\n'
    only: a '\\r', '\\x0b', '\\x85', '\\u2028' and the like stay in their
    line, where parse_public_key refuses them (str.splitlines would split
    there, and read two keys where dropbear or a user sees one, or the
    other way round)."""
    return [(n, line) for n, line in enumerate(text.split("\n"), 1) if line.strip(" ")]


def _type_shown(kind: str) -> str:
    """": ssh-dss" for a word shaped like a key type, to say which; nothing
    for anything else: what was pasted there may be a secret (a private
    key, a password hash), and not a character of it is shown."""
    return f": {kind}" if _TYPE_SHAPED.fullmatch(kind) and not looks_secret(kind) else ""


def _name(ch: str) -> str:
    names = {"\r": "a carriage return (\\x0d)", "\t": "a tab (\\x09)"}
    return names.get(ch, f"a control or separator character ({shown(ch)})")


def _characters(line: str) -> None:
    for at, ch in enumerate(line, 1):
        if " " <= ch <= "~":
            continue
        if ch == "\n":
            raise KeyLineError("more than one line: paste one public key per line")
        if ch == "\r":
            raise KeyLineError(f"{_name(ch)} at character {at}: SSH (dropbear) would end the "
                               "line there and read what follows as another key; paste one "
                               "key per line")
        if ch < " " or ch == "\x7f" or ch.isspace() or not ch.isprintable():
            raise KeyLineError(f"{_name(ch)} at character {at}: a key line is printable "
                               "ASCII")
        raise KeyLineError(f"a character outside printable ASCII ({shown(ch)}) at character "
                           f"{at}: a key line (comment included) is printable ASCII")


class _Reader:
    """SSH wire format (RFC 4251): uint32-length strings and mpints."""

    def __init__(self, blob: bytes, kind: str) -> None:
        self.blob, self.kind, self.pos = blob, kind, 0

    def string(self, what: str) -> bytes:
        if len(self.blob) - self.pos < 4:
            raise KeyLineError(f"the key's data is cut short (no {what}): not a whole "
                               f"{self.kind} key")
        n = int.from_bytes(self.blob[self.pos:self.pos + 4], "big")
        start = self.pos + 4
        if n > len(self.blob) - start:
            raise KeyLineError(f"the key's data is cut short (in its {what}): not a whole "
                               f"{self.kind} key")
        self.pos = start + n
        return self.blob[start:self.pos]

    def mpint(self, what: str) -> int:
        raw = self.string(what)
        if not raw or raw[0] & 0x80:
            raise KeyLineError(f"the key's {what} is not a positive number")
        if raw[0] == 0 and (len(raw) == 1 or not raw[1] & 0x80):
            raise KeyLineError(f"the key's {what} has a needless leading zero byte")
        return int.from_bytes(raw, "big")

    def end(self) -> None:
        if self.pos != len(self.blob):
            raise KeyLineError(f"the key's data has {len(self.blob) - self.pos} bytes after the "
                               f"{self.kind} key")


def _application(r: _Reader) -> None:
    app = r.string("application")
    if not app.startswith(b"ssh:") or not all(0x21 <= b <= 0x7E for b in app):
        raise KeyLineError("the security key's application is not ssh:... in printable ASCII")


def _structure(kind: str, blob: bytes) -> None:
    """The key data must be a well-formed key of `kind`, and nothing more."""
    r = _Reader(blob, kind)
    named = r.string("type")
    if named != kind.encode():
        known = next((t for t in TYPES if t.encode() == named), None)
        if known:
            raise KeyLineError(f"the key's data is of type {known}, not {kind} (the line's "
                               "type and its data differ)")
        raise KeyLineError(f"the key's data is not a {kind} key")
    if kind in ("ssh-ed25519", "sk-ssh-ed25519@openssh.com"):
        if len(r.string("public key")) != 32:
            raise KeyLineError("the key's Ed25519 public key is not 32 bytes")
    elif kind == "ssh-rsa":
        e, n = r.mpint("exponent"), r.mpint("modulus")
        if e < 3 or e % 2 == 0 or e.bit_length() > 64:
            raise KeyLineError("the key's RSA exponent is not an odd number of at most 64 bits")
        low, high = RSA_BITS
        if not low <= n.bit_length() <= high:
            raise KeyLineError(f"an RSA key of {n.bit_length()} bits: keel takes {low} to "
                               f"{high} (an Ed25519 key is shorter and as strong)")
    else:  # ecdsa and sk-ecdsa
        curve = kind.removeprefix("sk-").split("@")[0].rsplit("-", 1)[1]
        if r.string("curve") != curve.encode():
            raise KeyLineError(f"the key's curve is not {curve} (its type says {kind})")
        point = r.string("public point")
        if len(point) != _EC_POINT[curve] or point[0] != 4:
            raise KeyLineError(f"the key's public point is not an uncompressed {curve} point")
    if kind.startswith("sk-"):
        _application(r)
    r.end()


def _base64(text: str, kind: str) -> bytes:
    if len(text) % 4 or not _BASE64.fullmatch(text):
        raise KeyLineError("the key's base64 part is damaged (characters outside base64, "
                           "or a length not a multiple of 4)")
    try:
        blob = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        raise KeyLineError("the key's base64 part is damaged") from None
    if base64.b64encode(blob).decode() != text:
        raise KeyLineError("the key's base64 part is not canonical (unused bits set)")
    return blob


def parse_public_key(text: str | bytes) -> SshKey:
    """One public key line: TYPE BASE64 [COMMENT], with spaces around and
    between the fields; KeyLineError (a ValueError) says what is wrong."""
    if isinstance(text, bytes):
        try:
            text = text.decode("ascii")
        except UnicodeDecodeError as err:
            raise KeyLineError(f"a byte outside ASCII (0x{text[err.start]:02x}) at byte "
                               f"{err.start + 1}: a key line is printable ASCII") from None
    if not isinstance(text, str):
        raise KeyLineError("not text: paste one public key line")
    if len(text.encode("utf-8", "surrogatepass")) > MAX_LINE:
        raise KeyLineError(f"longer than {MAX_LINE} bytes: one public key line, please (an "
                           f"RSA key of at most {RSA_BITS[1]} bits, a comment of at most "
                           f"{MAX_COMMENT} characters)")
    if "PRIVATE KEY" in text:
        raise KeyLineError("that is a private key: paste the .pub file's line, and keep "
                           "the private key to yourself")
    _characters(text)
    line = text.strip(" ")
    if not line:
        raise KeyLineError("empty: paste one public key line (ssh-ed25519 AAAA... comment)")
    m = _FIELDS.fullmatch(line)
    kind = m[1] if m else line.split(" ", 1)[0]
    if kind not in TYPES:
        if any(f" {t} " in f" {line} " for t in TYPES):
            raise KeyLineError("options before the key type (like from=... or command=...) "
                               "are not taken: paste the key alone (TYPE BASE64 COMMENT)")
        raise KeyLineError(f"not an SSH public key type{_type_shown(kind)} (expected one of "
                           + ", ".join(TYPES) + ")")
    if not m:
        raise KeyLineError("the key's base64 part is missing")
    blob = _base64(m[2], kind)
    _structure(kind, blob)
    comment = m[3] or ""
    if len(comment) > MAX_COMMENT:
        raise KeyLineError(f"the comment is longer than {MAX_COMMENT} characters")
    return SshKey(kind, blob, comment)
