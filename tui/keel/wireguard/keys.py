"""The router's WireGuard private key: made once on /data (mode 0600), read
only to hand it to `wg` through a file, never printed, logged or shown."""

from __future__ import annotations

import os
from pathlib import Path

from keel.system.commands import Runner

KEY_PATH = Path("/data/keel/wireguard.key")


class KeyFileError(RuntimeError):
    """The key file is unusable (wrong mode, wrong shape): says which, not the key."""


def ensure_private_key(path: Path = KEY_PATH, runner: Runner | None = None) -> bool:
    """Create the private key if it is missing; True if it was created now."""
    runner = runner or Runner()
    if path.exists():
        check_private_key(path)
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    key = runner.output(["wg", "genkey"]).strip()
    tmp = path.with_suffix(".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.write(fd, (key + "\n").encode())
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, path)
    return True


def check_private_key(path: Path = KEY_PATH) -> None:
    mode = path.stat().st_mode & 0o777
    if mode & 0o077:
        raise KeyFileError(f"{path}: mode {mode:04o} lets others read the private key; "
                        f"run `chmod 600 {path}`")
    text = path.read_text().strip()
    if len(text) != 44 or not text.endswith("="):
        raise KeyFileError(f"{path}: not a WireGuard private key (expected 44 base64 characters)")


def public_key(path: Path = KEY_PATH, runner: Runner | None = None) -> str:
    """The public key of the private key in `path` (via `wg pubkey` on stdin)."""
    runner = runner or Runner()
    check_private_key(path)
    return runner.output(["wg", "pubkey"], input=path.read_text()).strip()
