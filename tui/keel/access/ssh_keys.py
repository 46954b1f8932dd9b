"""SSH keys that may log in as root: those added from the console (kept in
/data/keel/access/ssh_keys) and those the config lists (access.ssh_keys),
written together as dropbear's authorized_keys (/data/keel/ssh/, dropbear -D).
Password logins over SSH stay off (dropbear -s).

Every line is read the same strict way (keel.parse.ssh_key): split on '\n'
only, each line one key or refused; a refused line is left out of
authorized_keys (and `keel access` names it), never passed on."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from pathlib import Path

from keel.parse.ssh_key import SshKey, parse_public_key, split_key_lines
from keel.secret_shape import redact
from keel.shown import shown

ACCESS_DIR = Path("/data/keel/access")
AUTHORIZED_KEYS = Path("/data/keel/ssh/authorized_keys")
_FINGERPRINT = re.compile(r"SHA256:[A-Za-z0-9+/]{43}")  # as SshKey.fingerprint writes it
MAX_STORE = 1 << 20  # bytes read of the store: a few hundred keys fit in a few KiB


def merged(*groups: Iterable[str]) -> list[SshKey]:
    """The keys of every group, each once (by its key data), in order; lines
    that are not keys are left out (the config loader has refused them)."""
    seen, out = set(), []
    for group in groups:
        for line in group:
            try:
                key = parse_public_key(line)
            except ValueError:
                continue
            if key.blob not in seen:
                seen.add(key.blob)
                out.append(key)
    return out


def authorized_keys_text(keys: Iterable[SshKey]) -> str:
    return "".join(key.line + "\n" for key in keys)


class KeyStore:
    """The keys added from the console."""

    def __init__(self, directory: Path = ACCESS_DIR) -> None:
        self.path = directory / "ssh_keys"

    def _numbered(self) -> list[tuple[int, str]]:
        try:
            with open(self.path, "rb") as f:
                data = f.read(MAX_STORE)
        except OSError:
            return []
        # a byte that is not UTF-8 becomes U+FFFD, which the parser refuses
        return split_key_lines(data.decode("utf-8", "replace"))

    def lines(self) -> list[str]:
        """The store's lines that are not blank, split on '\n' only."""
        return [line for _, line in self._numbered()]

    def refused(self) -> list[tuple[int, str]]:
        """(line number, why) of each line of the store that is not a key
        keel takes: left out of authorized_keys."""
        out = []
        for n, line in self._numbered():
            try:
                parse_public_key(line)
            except ValueError as err:
                out.append((n, str(err)))
        return out

    def all(self) -> list[SshKey]:
        return merged(self.lines())

    def _write(self, keys: list[SshKey]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_name(".ssh_keys.new")
        tmp.write_text(authorized_keys_text(keys))
        os.replace(tmp, self.path)

    def add(self, text: str) -> SshKey:
        """Add one pasted key (ValueError says what is wrong; nothing changes)."""
        key = parse_public_key(text)
        keys = self.all()
        if any(k.blob == key.blob for k in keys):
            raise ValueError(f"already there: {key.describe()}")
        self._write([*keys, key])
        return key

    def remove(self, fingerprint: str) -> SshKey:
        keys = self.all()
        gone = [k for k in keys if k.fingerprint == fingerprint]
        if not gone:
            # what was typed there may be anything, a private key too: all
            # but a fingerprint is shown with its secret-shaped tokens redacted
            said = (fingerprint if _FINGERPRINT.fullmatch(fingerprint)
                    else shown(redact(fingerprint), 80))
            raise ValueError(f"no key with fingerprint {said}")
        self._write([k for k in keys if k.fingerprint != fingerprint])
        return gone[0]


def write_authorized_keys(config_keys: Iterable[str], store: KeyStore,
                          path: Path | None = None) -> Path:
    """dropbear's authorized_keys now (what `keel apply` writes too)."""
    path = path or AUTHORIZED_KEYS
    text = authorized_keys_text(merged(config_keys, store.lines()))
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(".authorized_keys.new")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(text)
    os.replace(tmp, path)
    return path
