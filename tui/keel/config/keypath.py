"""Key names as messages show them: bare or quoted as TOML writes them,
cut short when they are long, and never echoed when they look like a secret
(a WireGuard key pasted where a key name goes is shown as <redacted>)."""

from __future__ import annotations

import json
import re

REDACTED = "<redacted>"
LONG_NAME = 64  # longer key names are shown cut short
_BARE = re.compile(r"[A-Za-z0-9_-]+")
_TOKEN_CHARS = re.compile(r"[A-Za-z0-9+/_=-]+")
_HEX = re.compile(r"[0-9a-fA-F]{32,}")


def looks_secret(name: str) -> bool:
    """A string that looks like a key or a token rather than a word: base64
    or hex of 20 characters or more, or letters of both cases mixed with
    digits. Key names of the schema (snake_case words) never do."""
    if len(name) < 20 or not _TOKEN_CHARS.fullmatch(name):
        return False
    if _HEX.fullmatch(name):
        return True
    upper = any(c.isupper() for c in name)
    lower = any(c.islower() for c in name)
    digits = sum(c.isdigit() for c in name)
    if "+" in name or "/" in name or name.endswith("="):
        return upper + lower + bool(digits) >= 2
    return upper and lower and digits >= 2


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
