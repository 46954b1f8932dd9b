"""Text that came from outside (the network, a pasted line, a file a user
wrote) made safe to show on a terminal: every control character, and every
character a terminal or a font may treat as one, escaped as `\\xNN`,
`\\uNNNN` or `\\UNNNNNNNN`. Pure; the CLI and the UI both use it."""

from __future__ import annotations

import unicodedata

__all__ = ["shown"]

# Unicode categories a terminal must never receive raw: controls (C0, DEL,
# C1), format characters (bidi overrides, zero-width joiners), line and
# paragraph separators, surrogates, private use and unassigned code points.
_UNSAFE_CATEGORIES = frozenset({"Cc", "Cf", "Zl", "Zp", "Cs", "Co", "Cn"})


def _escape(ch: str) -> str:
    code = ord(ch)
    if code <= 0xFF:
        return f"\\x{code:02x}"
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


def shown(text: object, limit: int | None = None) -> str:
    """`text` with every unsafe character escaped (a backslash too, so the
    result reads back without doubt); cut to `limit` characters of the
    escaped form, with "..." when cut."""
    s = text if isinstance(text, str) else str(text)
    out = []
    for ch in s:
        if ch == "\\":
            out.append("\\\\")
        elif ch == " " or (ch.isprintable() and unicodedata.category(ch) not in _UNSAFE_CATEGORIES):
            out.append(ch)
        else:
            out.append(_escape(ch))
    result = "".join(out)
    if limit is not None and len(result) > limit:
        result = result[: max(0, limit - 3)] + "..."
    return result
