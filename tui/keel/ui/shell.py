"""Dropping from the UI to a root shell, only after the root password.

The password is checked against /etc/shadow with a crypt(3)-compatible hash:
Python's `crypt` module where it exists (removed in 3.13), else libcrypt via
ctypes (libxcrypt: yescrypt, sha512, ...), else `openssl passwd` (md5, sha256,
sha512 only). The password goes to helpers on stdin, never in argv.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import hmac
import os
import subprocess
import threading
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import Enum

Hasher = Callable[[str, str], "str | None"]  # (password, setting/hash) -> hash or None


class RootPassword(Enum):
    SET = "set"
    EMPTY = "empty"  # no password: no shell until one is set
    LOCKED = "locked"  # '!' or '*': no password login possible
    UNREADABLE = "unreadable"


def python_crypt_hasher() -> Hasher | None:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            import crypt  # type: ignore[import-not-found]
    except ImportError:
        return None
    return lambda password, setting: crypt.crypt(password, setting)


_libcrypt_lock = threading.Lock()


def libcrypt_hasher() -> Hasher | None:
    name = ctypes.util.find_library("crypt")
    if not name:
        return None
    try:
        lib = ctypes.CDLL(name)
    except OSError:
        return None
    fn = lib.crypt
    fn.restype, fn.argtypes = ctypes.c_char_p, [ctypes.c_char_p, ctypes.c_char_p]

    def hasher(password: str, setting: str) -> str | None:
        with _libcrypt_lock:  # crypt(3) returns a static buffer
            out = fn(password.encode(), setting.encode())
        return out.decode() if out else None

    return hasher


OPENSSL_SCHEMES = {"1": "-1", "5": "-5", "6": "-6"}


def openssl_hasher(openssl: str = "openssl") -> Hasher:
    def hasher(password: str, setting: str) -> str | None:
        parts = setting.split("$")
        if len(parts) < 4 or parts[1] not in OPENSSL_SCHEMES:
            return None
        salt = parts[2]
        argv = [openssl, "passwd", OPENSSL_SCHEMES[parts[1]], "-salt", salt, "-stdin"]
        if salt.startswith("rounds="):
            return None
        try:
            proc = subprocess.run(argv, input=password + "\n", capture_output=True, text=True,
                                  timeout=10, check=False)
        except OSError:
            return None
        return proc.stdout.strip() if proc.returncode == 0 else None

    return hasher


def default_hasher() -> Hasher:
    return python_crypt_hasher() or libcrypt_hasher() or openssl_hasher()


def shadow_entry(text: str, user: str = "root") -> str | None:
    for line in text.splitlines():
        fields = line.split(":")
        if len(fields) >= 2 and fields[0] == user:
            return fields[1]
    return None


@dataclass
class RootShell:
    shadow_path: str = "/etc/shadow"
    hasher: Hasher | None = None
    argv: Sequence[str] | None = None

    def _hash_field(self) -> str | None:
        try:
            with open(self.shadow_path, encoding="utf-8") as f:
                return shadow_entry(f.read())
        except OSError:
            return None

    def status(self) -> RootPassword:
        field = self._hash_field()
        if field is None:
            return RootPassword.UNREADABLE
        if field == "":
            return RootPassword.EMPTY
        if field.startswith(("!", "*")):
            return RootPassword.LOCKED
        return RootPassword.SET

    def verify(self, password: str) -> bool:
        field = self._hash_field()
        if not field or field.startswith(("!", "*")):
            return False
        hasher = self.hasher or default_hasher()
        got = hasher(password, field)
        return got is not None and hmac.compare_digest(got.encode(), field.encode())

    def launch(self) -> int:
        argv = list(self.argv or (["/bin/sh", "-l"] if os.geteuid() == 0 else ["su", "-"]))
        return subprocess.call(argv)
