"""The version of keel this image is: /etc/keel/release (written at build
time from tui/keel/__init__.py and git), else the package's own."""

from __future__ import annotations

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
