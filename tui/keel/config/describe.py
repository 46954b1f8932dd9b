"""The schema as a flat list of keys, for docs, the UI and the loader's
"did you mean" hints: path, TOML type, default, rule, description."""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from typing import Any

from keel.config.schema import ANY, Config, Rule

_SCALARS = {str: "string", int: "integer", bool: "boolean"}


@dataclass(frozen=True)
class KeyInfo:
    path: str  # "wan.shaping.download_kbit"; keys of arrays of tables: "wireguard.peer[].endpoint"
    type: str  # "integer", "string or integer", "array of strings", "table", ...
    default: Any  # None when the key is required or has no value by default
    required: bool
    doc: str
    rule: Rule
    item: Rule | None  # the rule of each element of an array

    @property
    def name(self) -> str:
        return self.path.rsplit(".", 1)[-1]

    @property
    def allowed(self) -> str:
        """What values are allowed, in words ("" when the type says it all)."""
        most = f"at most {self.rule.most}" if self.rule.most is not None else ""
        if self.item is not None and self.item.describe():
            return "; ".join(filter(None, ["each: " + self.item.describe(), most]))
        return self.rule.describe()

    @property
    def is_table(self) -> bool:
        return self.type in ("table", "array of tables")


def kinds(annotation: Any) -> tuple[Any, ...]:
    """The types an annotation allows, without None."""
    if isinstance(annotation, types.UnionType) or typing.get_origin(annotation) is typing.Union:
        return tuple(t for t in typing.get_args(annotation) if t is not type(None))
    return (annotation,)


def array_item(kind: Any) -> Any | None:
    """The element type of tuple[X, ...], else None."""
    return typing.get_args(kind)[0] if typing.get_origin(kind) is tuple else None


def type_name(annotation: Any) -> str:
    names = []
    for kind in kinds(annotation):
        item = array_item(kind)
        if dataclasses.is_dataclass(kind):
            names.append("table")
        elif item is not None and dataclasses.is_dataclass(item):
            names.append("array of tables")
        elif item is not None:
            names.append(f"array of {_SCALARS[item]}s")
        else:
            names.append(_SCALARS[kind])
    return " or ".join(names)


def walk(cls: type = Config, prefix: str = "") -> Iterator[KeyInfo]:
    hints = typing.get_type_hints(cls)
    for f in dataclasses.fields(cls):
        path = f"{prefix}.{f.name}" if prefix else f.name
        meta = f.metadata
        required = bool(meta.get("required"))
        # a section (default_factory) or a required key has no default of its own
        default = None if f.default is dataclasses.MISSING else f.default
        annotation = hints[f.name]
        yield KeyInfo(path, type_name(annotation), default, required, meta.get("doc", ""),
                      meta.get("rule", ANY), meta.get("item"))
        for kind in kinds(annotation):
            item = array_item(kind)
            if dataclasses.is_dataclass(kind):
                yield from walk(kind, path)
            elif item is not None and dataclasses.is_dataclass(item):
                yield from walk(item, path + "[]")


@cache
def by_name() -> dict[str, tuple[str, ...]]:
    """Every key's last name -> the full paths that end in it."""
    out: dict[str, list[str]] = {}
    for info in walk():
        out.setdefault(info.name, []).append(info.path)
    return {name: tuple(paths) for name, paths in out.items()}
