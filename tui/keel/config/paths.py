"""Where the config lives: the shipped default on the read-only root, the
user's copy on /data (in force when it exists), and the examples shipped in
the package."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

DEFAULT = Path("/etc/keel/keel.toml")
USER = Path("/data/keel/keel.toml")
EXAMPLES = ("edge", "hub")


def in_force(default: Path | None = None, user: Path | None = None) -> Path:
    """The config keel applies: the user's copy if it exists, else the default."""
    default, user = default or DEFAULT, user or USER
    return user if user.exists() else default


def example_text(name: str) -> str:
    """An example config (`edge`: the mini-PC at home, `hub`: the VPS end)."""
    if name not in EXAMPLES:
        raise ValueError(f"no example {name!r}: one of {', '.join(EXAMPLES)}")
    return resources.files("keel.config").joinpath("examples", f"{name}.toml").read_text()
