"""Key names as messages show them: bare or quoted as TOML writes them,
cut short when they are long, and never echoed when they look like a secret
(a WireGuard key pasted where a key name goes is shown as <redacted>)."""

from __future__ import annotations

import json
import re

from keel.secret_shape import REDACTED, looks_secret

__all__ = ["LONG_NAME", "REDACTED", "join", "looks_secret", "segment", "toml_key"]

LONG_NAME = 64  # longer key names are shown cut short
_BARE = re.compile(r"[A-Za-z0-9_-]+")


def toml_key(name: str) -> str:
    """A key as TOML writes it in a dotted path: bare, else quoted."""
    return name if _BARE.fullmatch(name) else json.dumps(name)


def segment(name: str) -> str:
    """A key as a message shows it: like toml_key, but a secret-looking
    name is <redacted> and a long one is cut short."""
    if looks_secret(name):
        return REDACTED
    if len(name) > LONG_NAME:
        return json.dumps(name[:LONG_NAME // 2])[:-1] + '..."'
    return toml_key(name)


def join(path: str, name: str) -> str:
    """path.name, as messages show it."""
    return f"{path}.{segment(name)}" if path else segment(name)
