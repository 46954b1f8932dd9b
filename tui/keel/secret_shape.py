"""What a secret looks like, so that no message ever shows one, wherever it
was pasted: a token of base64 or hex (a WireGuard key, an API token), or a
crypt(3) password hash ($6$..., $y$..., $2b$..., $argon2id$...). Pure; the
config loader (keel.config.scrub, keel.config.keypath), the SSH key parser
and the console use it.

The shapes are guesses on purpose: a message loses a word now and then
(shown as <redacted>) rather than ever showing a key. Names of the schema
(snake_case words), interface names, addresses, prefixes and SSH key types
never look like a secret."""

from __future__ import annotations

import re

REDACTED = "<redacted>"
SECRET_MIN = 20  # shorter tokens are words, ports, names; a WireGuard key has 44
LONG_RUN = 40  # base64 this long is a key, not a word (snake_case names have '_')
_TOKEN_CHARS = re.compile(r"[A-Za-z0-9+/_=-]+")
_HEX = re.compile(r"[0-9a-fA-F]{32,}")
# a crypt(3) hash: $id$ (id: letters, digits, '-'), then its fields; also
# cut short, as a message that cuts a value would show it
_CRYPT = re.compile(r"\$[A-Za-z0-9-]{1,16}\$[^\s\"']*")
# the runs redact() looks at: what could be a token, apart from the words around it
_RUN = re.compile(r"[A-Za-z0-9+/_=-]+")


def looks_secret(token: str) -> bool:
    """A string that looks like a key or a token rather than a word: a
    crypt(3) hash; or base64 or hex of SECRET_MIN characters or more, of
    letters of both cases mixed with digits, or of LONG_RUN characters or
    more without '_' or '-' (with a digit, '+', '/' or the padding '=').
    Key names of the schema (snake_case words) never do."""
    if _CRYPT.fullmatch(token):
        return True
    if len(token) < SECRET_MIN or not _TOKEN_CHARS.fullmatch(token):
        return False
    if _HEX.fullmatch(token):
        return True
    upper = any(c.isupper() for c in token)
    lower = any(c.islower() for c in token)
    digits = sum(c.isdigit() for c in token)
    if (len(token) >= LONG_RUN and "_" not in token and "-" not in token
            and (token.endswith("=") or digits or "+" in token or "/" in token)):
        return True  # base64 of 30 bytes or more, whatever its letters (even all "A")
    if "+" in token or "/" in token or token.endswith("="):
        return upper + lower + bool(digits) >= 2
    return upper and lower and digits >= 2


def redact(text: str) -> str:
    """`text` with every crypt(3) hash and every token that looks_secret
    replaced by REDACTED; the rest as it was."""
    text = _CRYPT.sub(REDACTED, text)
    return _RUN.sub(lambda m: REDACTED if looks_secret(m.group()) else m.group(), text)
