"""Where the config lives: the shipped default on the read-only root, the
user's copy on /data. The user's copy is in force when it exists."""

from __future__ import annotations

from pathlib import Path

DEFAULT = Path("/etc/keel/keel.toml")
USER = Path("/data/keel/keel.toml")


def in_force(default: Path = DEFAULT, user: Path = USER) -> Path:
    return user if user.exists() else default
