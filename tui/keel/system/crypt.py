"""The system's crypt(3): checking a password against a shadow hash, and
hashing a new one (yescrypt where libcrypt has it, else SHA-512).

Python's `crypt` module where it exists (removed in 3.13), else libcrypt via
ctypes (libxcrypt: yescrypt, sha512, ...), else `openssl passwd` (md5, sha256,
sha512 only). The password goes to helpers on stdin, never in argv."""

from __future__ import annotations

import ctypes
import ctypes.util
import secrets
import subprocess
import threading
import warnings
from collections.abc import Callable

Hasher = Callable[[str, str], "str | None"]  # (password, setting/hash) -> hash or None


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


SALT_ALPHABET = "./0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


def _libcrypt_gensalt(prefix: bytes) -> str | None:
    name = ctypes.util.find_library("crypt")
    if not name:
        return None
    try:
        fn = ctypes.CDLL(name).crypt_gensalt
    except (OSError, AttributeError):
        return None
    fn.restype = ctypes.c_char_p
    fn.argtypes = [ctypes.c_char_p, ctypes.c_ulong, ctypes.c_char_p, ctypes.c_int]
    out = fn(prefix, 0, None, 0)  # no random bytes given: libcrypt takes the OS's
    return out.decode() if out else None


def new_hash(password: str, hasher: Hasher | None = None) -> str:
    """A shadow hash of `password`: yescrypt ($y$) when libcrypt makes one,
    else SHA-512 ($6$) with a 16-character random salt. Checked by hashing
    again before it is returned."""
    if not password:
        raise ValueError("an empty password is no password")
    hasher = hasher or default_hasher()
    for setting in (_libcrypt_gensalt(b"$y$"),
                    "$6$" + "".join(secrets.choice(SALT_ALPHABET) for _ in range(16))):
        if setting is None:
            continue
        hashed = hasher(password, setting)
        if hashed and hashed.startswith(setting[:3]) and hasher(password, hashed) == hashed:
            return hashed
    raise OSError("this system's crypt makes neither yescrypt nor SHA-512 hashes")
