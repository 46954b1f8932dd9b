"""Dropping from the UI to a root shell, only after the root password.

The password is checked against /etc/shadow with a crypt(3)-compatible hash:
Python's `crypt` module where it exists (removed in 3.13), else libcrypt via
ctypes (libxcrypt: yescrypt, sha512, ...), else `openssl passwd` (md5, sha256,
sha512 only). The password goes to helpers on stdin, never in argv. A right
password whose hash the console's login cannot check (yescrypt, stored by an
earlier keel) is handed to `rehash`, which stores it again in a scheme it can.
"""

from __future__ import annotations

import contextlib
import hmac
import os
import subprocess
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from keel.access.password import RootPassword, shadow_entry, status_of
from keel.system.crypt import Hasher, default_hasher, login_checks


@dataclass
class RootShell:
    shadow_path: str = "/etc/shadow"
    hasher: Hasher | None = None
    argv: Sequence[str] | None = None
    rehash: Callable[[str], None] | None = None

    def _shadow(self) -> str | None:
        try:
            with open(self.shadow_path, encoding="utf-8") as f:
                return f.read()
        except OSError:
            return None

    def _hash_field(self) -> str | None:
        text = self._shadow()
        return shadow_entry(text) if text is not None else None

    def status(self) -> RootPassword:
        return status_of(self._shadow())

    def verify(self, password: str) -> bool:
        field = self._hash_field()
        if not field or field.startswith(("!", "*")):
            return False
        hasher = self.hasher or default_hasher()
        got = hasher(password, field)
        ok = got is not None and hmac.compare_digest(got.encode(), field.encode())
        if ok and self.rehash is not None and not login_checks(field):
            # on failure still the old hash: the console asks again at its next start
            with contextlib.suppress(OSError, ValueError):
                self.rehash(password)
        return ok

    def launch(self) -> int:
        argv = list(self.argv or (["/bin/sh", "-l"] if os.geteuid() == 0 else ["su", "-"]))
        return subprocess.call(argv)
