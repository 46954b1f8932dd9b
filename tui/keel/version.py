"""The version of keel this image is: /etc/keel/release (written at build
time from tui/keel/__init__.py and git), else the package's own."""

from __future__ import annotations

import re
from pathlib import Path

from keel import __version__

RELEASE = Path("/etc/keel/release")


def parse_release(text: str) -> dict[str, str]:
    out = {}
    for line in text.splitlines():
        key, sep, value = line.partition("=")
        if sep:
            out[key.strip()] = value.strip()
    return out


def image_version(release: Path = RELEASE) -> str:
    try:
        version = parse_release(release.read_text()).get("version", "")
    except (OSError, UnicodeDecodeError):
        version = ""
    return version or __version__


# keel's versions: MAJOR.MINOR.PATCH, an optional -prerelease, an optional
# +build (post-build.sh adds +g<commit>; the lab adds .next and the like after
# it). Ordered as semantic versions: the build part never orders.
VERSION = re.compile(r"(\d{1,9})\.(\d{1,9})\.(\d{1,9})(?:-([0-9A-Za-z.-]{1,64}))?"
                     r"(?:\+[\x21-\x7e]{0,128})?")


def version_key(version: str) -> tuple | None:
    """A version's place in the order (compare two keys), or None when it is
    not keel's form. A release sorts after its prereleases."""
    match = VERSION.fullmatch(version)
    if match is None:
        return None
    core = tuple(int(match.group(n)) for n in (1, 2, 3))
    pre = match.group(4)
    if pre is None:
        return (core, 1, ())
    parts = tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in pre.split("."))
    return (core, 0, parts)


def is_older(candidate: str, running: str) -> bool | None:
    """Whether `candidate` is an older keel than `running`; None when either
    is not keel's form (the order cannot be told)."""
    new, old = version_key(candidate), version_key(running)
    if new is None or old is None:
        return None
    return new < old
