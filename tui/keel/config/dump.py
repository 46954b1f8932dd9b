"""A Config written back as TOML, every key spelled out (defaults included):
`keel config show`, and the round trip load(dump(c)) == c."""

from __future__ import annotations

import dataclasses
import typing
from typing import Any

from keel.config.describe import array_item, kinds
from keel.config.keypath import toml_key as segment
from keel.config.schema import Config

_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f",
            "\r": "\\r"}


def toml_string(text: str) -> str:
    out = []
    for ch in text:
        if ch in _ESCAPES:
            out.append(_ESCAPES[ch])
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return toml_string(value)
    if isinstance(value, (tuple, list)):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    raise TypeError(f"no TOML for {type(value).__name__}")


def _is_table(value: Any) -> bool:
    return dataclasses.is_dataclass(value)


def _is_table_array(value: Any) -> bool:
    return isinstance(value, tuple) and bool(value) and all(_is_table(v) for v in value)


def _table(obj: Any, header: str, array: bool = False) -> list[str]:
    fields = [(f.name, getattr(obj, f.name)) for f in dataclasses.fields(obj)]
    lines = [f"[[{header}]]" if array else f"[{header}]"] if header else []
    for name, value in fields:
        if value is None or _is_table(value) or _is_table_array(value):
            continue
        if isinstance(value, tuple) and not value and _table_array_field(obj, name):
            continue
        lines.append(f"{segment(name)} = {toml_value(value)}")
    for name, value in fields:
        path = f"{header}.{segment(name)}" if header else segment(name)
        if _is_table(value):
            lines += ["", *_table(value, path)]
        elif _is_table_array(value):
            for element in value:
                lines += ["", *_table(element, path, array=True)]
    return lines


def _table_array_field(obj: Any, name: str) -> bool:
    """An empty tuple of tables (like no peers) is written as nothing."""
    hint = typing.get_type_hints(type(obj))[name]
    return any(dataclasses.is_dataclass(array_item(k)) for k in kinds(hint))


def to_toml(config: Config) -> str:
    lines = _table(config, "")
    while lines and not lines[0]:
        lines.pop(0)
    return "\n".join(lines) + "\n"
