"""Reading a config file: at most 1 MiB of bytes (a router's config is a few
KiB; reading /dev/zero ends at once), then UTF-8 text, a UTF-8 BOM taken
off, and a byte that is not UTF-8 named by its line, column and offset."""

from __future__ import annotations

import codecs
from pathlib import Path

from keel.config.errors import ConfigError, Problem

MAX_BYTES = 1 << 20
_UTF16_BOMS = (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)


def read_bytes(path: Path, source: str) -> bytes:
    try:
        with open(path, "rb") as f:
            data = f.read(MAX_BYTES + 1)
    except OSError as err:
        raise ConfigError(source, [Problem("", f"cannot read: {err.strerror or err}")]) from None
    if len(data) > MAX_BYTES:
        raise ConfigError(source, [Problem("", "larger than 1 MiB: not a keel config")])
    return data


def decode(data: bytes, source: str) -> str:
    """UTF-8 text without its BOM, or ConfigError naming the first bad byte."""
    skipped = 0
    if data.startswith(codecs.BOM_UTF8):
        data, skipped = data[len(codecs.BOM_UTF8):], len(codecs.BOM_UTF8)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        if data.startswith(_UTF16_BOMS):
            reason = "not UTF-8 text: UTF-16 (save it as UTF-8)"
        else:
            at = err.start
            line = data.count(b"\n", 0, at) + 1
            column = at - (data.rfind(b"\n", 0, at) + 1) + 1
            reason = (f"not UTF-8 text: byte 0x{data[at]:02x} at line {line}, column {column} "
                      f"(byte offset {at + skipped})")
        raise ConfigError(source, [Problem("", reason)]) from None
