"""Secrets never reach a message: every string under a key named like a
secret (private, secret, preshared, psk), every key name that looks like
a secret or sits under such a key, and, wherever it was pasted, every token
shaped like a secret (keel.secret_shape: a key, a token, a password hash,
whole or cut short) is replaced by <redacted> in the problems shown. A walk
with a stack of its own: the file decides how deep it goes."""

from __future__ import annotations

from typing import Any

from keel.config.errors import Problem
from keel.config.keypath import REDACTED, looks_secret
from keel.config.schema import is_secret
from keel.secret_shape import redact

MIN_SECRET = 4  # scrubbing "1" out of every message would garble them


def secrets_in(data: Any) -> set[str]:
    found: set[str] = set()
    stack: list[tuple[Any, bool]] = [(data, False)]
    while stack:
        node, inside = stack.pop()
        if isinstance(node, dict):
            for name, value in node.items():
                name = str(name)
                if (inside or looks_secret(name)) and len(name) >= MIN_SECRET:
                    found.add(name)
                stack.append((value, inside or is_secret(name)))
        elif isinstance(node, list):
            stack.extend((value, inside) for value in node)
        elif inside and node is not None and not isinstance(node, bool):
            text = node if isinstance(node, str) else _text(node)
            if len(text) >= MIN_SECRET:
                found.add(text)
    return found


def _text(value: Any) -> str:
    try:
        return str(value)
    except ValueError:  # an int too long for str(): keel refuses those earlier
        return ""


def scrub(problems: list[Problem], secrets: set[str]) -> list[Problem]:
    """The problems with `secrets` (secrets_in's) and every secret-shaped
    token replaced by REDACTED."""
    longest_first = sorted(secrets, key=len, reverse=True)

    def clean(text: str) -> str:
        for secret in longest_first:
            if len(secret) <= len(text) and secret in text:
                text = text.replace(secret, REDACTED)
        return redact(text)
    return [Problem(clean(p.path), clean(p.reason)) for p in problems]
