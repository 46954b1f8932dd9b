"""Loading keel.toml: one path for every command (`config check`, `config
show`, `apply`, `--dry-run`, `--boot`): at most 1 MiB of UTF-8 (source.py),
limits checked before TOML is parsed (toml_syntax.py, prescan.py), removed
keys dropped with a warning (removed.py), then every key against the schema,
then the rules that tie keys together (relations.py). All problems are
collected, each with its key path; nothing is applied from an invalid file. A
reason never repeats a value, and secrets are scrubbed from every message all
the same (scrub.py)."""

from __future__ import annotations

import dataclasses
import difflib
import typing
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from keel.config import describe
from keel.config.checks import by_rule
from keel.config.errors import MAX_SHOWN, ConfigError, Problem
from keel.config.keypath import REDACTED, join, looks_secret, segment
from keel.config.relations import cross_checks
from keel.config.removed import drop_removed
from keel.config.schema import ANY, Config, Rule, is_secret
from keel.config.scrub import scrub, secrets_in
from keel.config.source import decode, read_bytes
from keel.config.toml_syntax import parse_toml

__all__ = ["REDACTED", "ConfigError", "Loaded", "load_file", "load_text", "parse_config",
           "read_config", "segment"]

_BAD = object()
_TYPE_NAMES = {str: "a string", int: "an integer", bool: "true or false", float: "a number",
               dict: "a table", list: "an array"}


def _what(value: Any) -> str:
    if isinstance(value, bool):
        return "true or false"
    for kind, name in _TYPE_NAMES.items():
        if isinstance(value, kind):
            return name
    return "a date or time" if hasattr(value, "isoformat") else type(value).__name__


def _typed(kind: Any, value: Any) -> bool:
    if kind is bool:
        return isinstance(value, bool)
    if kind is int:
        return isinstance(value, int) and not isinstance(value, bool)
    return kind is str and isinstance(value, str)


def _unknown(name: str, path: str, fields: list[str], hint: bool = True) -> Problem:
    """An unknown key; `hint` looks for the key meant (costly: only for the
    problems that will be shown)."""
    where = join(path, name)
    if is_secret(name):
        if "private" in name.lower():
            return Problem(where, "unknown key: the private key is not kept in keel.toml "
                                  "(it lives in /data/keel/wireguard.key)")
        return Problem(where, "unknown key: keel.toml holds no secrets")
    if not hint or looks_secret(name) or len(name) > 64:
        return Problem(where, "unknown key")
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


def _array(item: Any, value: Any, path: str, rule: Rule | None, most: int | None,
           problems: list[Problem]) -> Any:
    if not isinstance(value, list):
        problems.append(Problem(path, f"must be an array, not {_what(value)}"))
        return _BAD
    if most is not None and len(value) > most:  # before a check of each: they are many
        what = "tables" if dataclasses.is_dataclass(item) else "elements"
        problems.append(Problem(path, f"{len(value)} {what}: at most {most}"))
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
        return _array(item, value, path, meta.get("item"), meta.get("rule", ANY).most,
                      problems)
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
            problems.append(_unknown(name, path, list(fields), len(problems) < MAX_SHOWN))
            bad = True
            continue
        value = _convert(hints[name], raw, join(path, name), f.metadata, problems)
        if value is _BAD:
            bad = True
        else:
            kwargs[name] = value
    for name, f in fields.items():
        if name not in data and f.metadata.get("required"):
            problems.append(Problem(join(path, name), "missing (required)"))
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
            problems.append(_unknown(name, "", list(fields), len(problems) < MAX_SHOWN))
            continue
        count = len(problems)
        value = _convert(hints[name], raw, name, f.metadata, problems)
        if value is not _BAD and len(problems) == count:
            kwargs[name] = value
            clean.add(name)
    return Config(**kwargs), clean


@dataclass(frozen=True)
class Loaded:
    """A valid config, the text it was read from (without a BOM: what a
    revision records), where from, and warnings (removed keys) to show."""

    config: Config
    text: str
    source: str
    warnings: tuple[Problem, ...] = ()

    def warning_lines(self) -> list[str]:
        return [f"warning: {self.source}: {w}" for w in self.warnings]


def parse_config(text: str, source: str = "keel.toml") -> Loaded:
    """A valid config from TOML text, or ConfigError with every problem."""
    text = text.removeprefix("\ufeff")
    data = parse_toml(text, source)
    warnings = drop_removed(data)
    problems: list[Problem] = []
    config, clean = _build_config(data, problems)
    problems += cross_checks(config, frozenset(clean))
    if problems:
        shown = scrub(problems[:MAX_SHOWN], secrets_in(data))
        raise ConfigError(source, shown, more=len(problems) - len(shown))
    return Loaded(config, text, source, tuple(warnings))


def read_config(path: Path | str, source: str | None = None) -> Loaded:
    """The one way keel reads a config file: bytes (at most 1 MiB), UTF-8,
    then parse_config. `source` names the file in messages (default: path)."""
    source = source or str(path)
    return parse_config(decode(read_bytes(Path(path), source), source), source)


def load_text(text: str, source: str = "keel.toml") -> Config:
    """A valid Config, or ConfigError with every problem found."""
    return parse_config(text, source).config


def load_file(path: Path | str) -> Config:
    return read_config(path).config
