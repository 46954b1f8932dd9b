"""What `keel upgrade` and the console's upgrade screen take as a bundle: a
path or an https URL, checked strictly before anything is fetched or read."""

from __future__ import annotations

from keel.shown import shown

MAX_TARGET = 2048


class TargetError(ValueError):
    """A target that is no bundle path or https URL; the message says why."""


def _named(char: str) -> str:
    """A refused character in printable ASCII: a space by name, any other
    (control, non-ASCII, even printable like "é") as its escape."""
    if char == " ":
        return "a space"
    code = ord(char)
    if code <= 0xFF:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def check_target(text: str) -> str:
    """A bundle's path or https URL, as typed or pasted: strict (printable
    ASCII, no spaces, bounded), or TargetError naming what is wrong. Plain
    http is refused: anyone on the path could hand over another bundle."""
    if not text or len(text) > MAX_TARGET:
        raise TargetError(f"a bundle path or URL of 1 to {MAX_TARGET} characters")
    bad = next((c for c in text if not (33 <= ord(c) < 127)), None)
    if bad is not None:
        raise TargetError(f"the bundle's name holds {_named(bad)}: not a path or URL")
    if text.startswith("-"):  # rauc would read it as an option
        raise TargetError(f"{shown(text)} starts with '-': write ./{shown(text)}")
    if "://" in text:
        scheme, _, rest = text.partition("://")
        if scheme == "http":
            raise TargetError("plain http:// is refused (anyone on the path could swap the "
                              "bundle): use https://")
        if scheme != "https":
            raise TargetError(f"{shown(scheme)}:// is not https://")
        if not rest.split("/", 1)[0]:
            raise TargetError(f"{shown(text)} names no host")
        return text
    if not text.endswith(".raucb"):
        raise TargetError(f"{shown(text)} is not a .raucb bundle")
    return text
