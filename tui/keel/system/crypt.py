"""The system's crypt(3): checking a password against a shadow hash, and
hashing a new one as SHA-512 crypt with many rounds: the strongest scheme that
every way in checks (BusyBox's login on ttyS0 and on tty1's fallback, built
with its own crypt, knows DES, MD5 and SHA-256/512 crypt, not yescrypt; SSH
takes keys only).

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
        if len(parts) < 3 or parts[1] not in OPENSSL_SCHEMES:
            return None
        salt = parts[2]
        if salt.startswith("rounds="):  # `openssl passwd` reads it from the salt
            if parts[1] == "1" or len(parts) < 4:
                return None
            salt = f"{parts[2]}${parts[3]}"
        argv = [openssl, "passwd", OPENSSL_SCHEMES[parts[1]], "-salt", salt, "-stdin"]
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


# What a new hash is: SHA-512 crypt, the strongest scheme BusyBox's own crypt
# checks (CONFIG_USE_BB_CRYPT_SHA, pinned in the release image's BusyBox
# fragment), with 40 times glibc's default rounds (docs/console.md: its cost).
LOGIN_SCHEME = "$6$"
SHA512_ROUNDS = 200_000
SALT_LENGTH = 16
# The schemes every way in checks: a hash stored in another one (yescrypt,
# `$y$`, as earlier keel versions stored) logs in nowhere but the UI's own
# shell key, and is asked again at the console.
LOGIN_SCHEMES = ("$6$", "$5$")


def login_checks(hashed: str) -> bool:
    """Whether BusyBox's login (ttyS0, tty1's fallback) can check `hashed`."""
    return hashed.startswith(LOGIN_SCHEMES)


def new_setting(rounds: int = SHA512_ROUNDS) -> str:
    salt = "".join(secrets.choice(SALT_ALPHABET) for _ in range(SALT_LENGTH))
    return f"{LOGIN_SCHEME}rounds={rounds}${salt}"


def new_hash(password: str, hasher: Hasher | None = None,
             rounds: int = SHA512_ROUNDS) -> str:
    """A shadow hash of `password` that every way in checks: SHA-512 crypt
    with `rounds` rounds and a 16-character random salt. Checked by hashing
    again before it is returned."""
    if not password:
        raise ValueError("an empty password is no password")
    hasher = hasher or default_hasher()
    setting = new_setting(rounds)
    hashed = hasher(password, setting)
    if hashed and hashed.startswith(setting + "$") and hasher(password, hashed) == hashed:
        return hashed
    raise OSError("this system's crypt does not make SHA-512 hashes with rounds")
