"""Loading keel.toml: TOML syntax, then every key against the schema, then the
rules that tie keys together (relations.py). All problems are collected, each
with its key path; nothing is applied from an invalid file. A reason never
repeats a value, and the values of keys named like private/secret/preshared
are scrubbed from every message all the same."""

from __future__ import annotations

import dataclasses
import difflib
import json
import re
import tomllib
import typing
from functools import cache
from pathlib import Path
from typing import Any

from keel.config import describe
from keel.config.checks import by_rule
from keel.config.errors import ConfigError, Problem
from keel.config.relations import cross_checks
from keel.config.schema import ANY, Config, Rule, is_secret

_BAD = object()
_TYPE_NAMES = {str: "a string", int: "an integer", bool: "true or false", float: "a number",
               dict: "a table", list: "an array"}
_BARE = re.compile(r"^[A-Za-z0-9_-]+$")
_AT_LINE = re.compile(r"\(at line (\d+), column (\d+)\)|\(at end of document\)")
REDACTED = "<redacted>"


def _what(value: Any) -> str:
    if isinstance(value, bool):
        return "true or false"
    for kind, name in _TYPE_NAMES.items():
        if isinstance(value, kind):
            return name
    return "a date or time" if hasattr(value, "isoformat") else type(value).__name__


def segment(name: str) -> str:
    """A key as TOML writes it in a dotted path: bare, else quoted."""
    return name if _BARE.fullmatch(name) else json.dumps(name)


def _join(path: str, name: str) -> str:
    return f"{path}.{segment(name)}" if path else segment(name)


def _typed(kind: Any, value: Any) -> bool:
    if kind is bool:
        return isinstance(value, bool)
    if kind is int:
        return isinstance(value, int) and not isinstance(value, bool)
    return kind is str and isinstance(value, str)


def _unknown(name: str, path: str, fields: list[str]) -> Problem:
    where = _join(path, name)
    if is_secret(name):
        if "private" in name.lower():
            return Problem(where, "unknown key: the private key is not kept in keel.toml "
                                  "(it lives in /data/keel/wireguard.key)")
        return Problem(where, "unknown key: keel.toml holds no secrets")
    close = difflib.get_close_matches(name, fields, 1)
    if close:
        return Problem(where, f"unknown key (did you mean '{close[0]}'?)")
    elsewhere = describe.by_name().get(name, ())
    if elsewhere:
        return Problem(where, f"unknown key (did you mean '{elsewhere[0]}'?)")
    return Problem(where, "unknown key")


def _scalar(kinds: tuple[Any, ...], value: Any, path: str, rule: Rule,
            problems: list[Problem]) -> Any:
    if not any(_typed(k, value) for k in kinds):
        wanted = " or ".join(_TYPE_NAMES[k] for k in kinds)
        problems.append(Problem(path, f"must be {wanted}, not {_what(value)}"))
        return _BAD
    reason = by_rule(rule, value)
    if reason:
        problems.append(Problem(path, reason))
        return _BAD
    return value


def _array(item: Any, value: Any, path: str, rule: Rule | None,
           problems: list[Problem]) -> Any:
    if not isinstance(value, list):
        problems.append(Problem(path, f"must be an array, not {_what(value)}"))
        return _BAD
    out = []
    for i, element in enumerate(value):
        where = f"{path}[{i}]"
        if dataclasses.is_dataclass(item):
            out.append(_build(item, element, where, problems))
        else:
            out.append(_scalar((item,), element, where, rule or ANY, problems))
    return _BAD if any(v is _BAD for v in out) else tuple(out)


def _convert(annotation: Any, value: Any, path: str, meta: typing.Mapping[str, Any],
             problems: list[Problem]) -> Any:
    kinds = describe.kinds(annotation)
    kind = kinds[0]
    if dataclasses.is_dataclass(kind):
        return _build(kind, value, path, problems)
    item = describe.array_item(kind)
    if item is not None:
        return _array(item, value, path, meta.get("item"), problems)
    return _scalar(kinds, value, path, meta.get("rule", ANY), problems)


@cache
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def _build(cls: Any, data: Any, path: str, problems: list[Problem]) -> Any:
    """cls built from a TOML table, or _BAD (problems say why), in file order."""
    if not isinstance(data, dict):
        problems.append(Problem(path, f"must be a table, not {_what(data)}"))
        return _BAD
    hints = _hints(cls)
    fields = {f.name: f for f in dataclasses.fields(cls)}
    bad = False
    kwargs = {}
    for name, raw in data.items():
        f = fields.get(name)
        if f is None:
            problems.append(_unknown(name, path, list(fields)))
            bad = True
            continue
        value = _convert(hints[name], raw, _join(path, name), f.metadata, problems)
        if value is _BAD:
            bad = True
        else:
            kwargs[name] = value
    for name, f in fields.items():
        if name not in data and f.metadata.get("required"):
            problems.append(Problem(_join(path, name), "missing (required)"))
            bad = True
    return _BAD if bad else cls(**kwargs)


def _build_config(data: dict[str, Any], problems: list[Problem]) -> tuple[Config, set[str]]:
    """The Config, with the default in place of each section that has a
    problem, and the names of the sections that had none."""
    hints = _hints(Config)
    fields = {f.name: f for f in dataclasses.fields(Config)}
    clean = set(fields) - set(data)
    kwargs = {}
    for name, raw in data.items():
        f = fields.get(name)
        if f is None:
            problems.append(_unknown(name, "", list(fields)))
            continue
        count = len(problems)
        value = _convert(hints[name], raw, name, f.metadata, problems)
        if value is not _BAD and len(problems) == count:
            kwargs[name] = value
            clean.add(name)
    return Config(**kwargs), clean


def _secrets(data: Any, inside: bool = False) -> set[str]:
    """Every string under a key named like a secret, and such keys' scalars."""
    found: set[str] = set()
    if isinstance(data, dict):
        for name, value in data.items():
            found |= _secrets(value, inside or is_secret(str(name)))
    elif isinstance(data, list):
        for value in data:
            found |= _secrets(value, inside)
    elif inside and data is not None and not isinstance(data, bool):
        text = str(data)
        if len(text) >= 4:  # scrubbing "1" out of every message would garble them
            found.add(text)
    return found


def _scrub(problems: list[Problem], secrets: set[str]) -> list[Problem]:
    def clean(text: str) -> str:
        for secret in sorted(secrets, key=len, reverse=True):
            text = text.replace(secret, REDACTED)
        return text
    return [Problem(clean(p.path), clean(p.reason)) for p in problems] if secrets else problems


def syntax_problem(err: tomllib.TOMLDecodeError) -> Problem:
    """A TOML syntax error, naming the line (and column)."""
    text = str(err)
    line = getattr(err, "lineno", None)
    col = getattr(err, "colno", None)
    m = _AT_LINE.search(text)
    if line is None and m and m[1]:
        line, col = int(m[1]), int(m[2])
    what = _AT_LINE.sub("", getattr(err, "msg", text)).strip() or "invalid TOML"
    where = f"line {line}, column {col}" if line else "the end of the file"
    return Problem("", f"TOML syntax error at {where}: {what}")


def load_text(text: str, source: str = "keel.toml") -> Config:
    """A valid Config, or ConfigError with every problem found."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        raise ConfigError(source, [syntax_problem(err)]) from None
    problems: list[Problem] = []
    config, clean = _build_config(data, problems)
    problems += cross_checks(config, frozenset(clean))
    if problems:
        raise ConfigError(source, _scrub(problems, _secrets(data)))
    return config


def load_file(path: Path | str) -> Config:
    path = Path(path)
    try:
        text = path.read_bytes().decode("utf-8")
    except OSError as err:
        raise ConfigError(str(path), [Problem("", f"cannot read: {err.strerror}")]) from None
    except UnicodeDecodeError:
        raise ConfigError(str(path), [Problem("", "not UTF-8 text")]) from None
    return load_text(text, str(path))
