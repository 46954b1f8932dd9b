"""The settings screens' model (no Textual): every key of the one schema
(keel.config.schema, walked by keel.config.describe) as a flat form field,
a value typed as text put into the TOML-ready dict, the loader's own check of
the result (key path: reason), and the diff of two configs as TOML.

No field is written by hand: a key added to the schema appears by itself,
with its widget chosen from its type and Rule."""

from __future__ import annotations

import copy
import difflib
import functools
import operator
import re
import tomllib
import typing
from dataclasses import dataclass
from typing import Any

from keel.config import describe
from keel.config.dump import to_toml, toml_value
from keel.config.errors import ConfigError, Problem
from keel.config.keypath import toml_key
from keel.config.load import parse_config
from keel.config.schema import Config, Rule

SOURCE = "settings"  # what the loader's messages name as the file
PEERS_NOTE = "edit peers in the file (/data/keel/keel.toml), then keel apply"
FORWARDS_NOTE = "edit forwards in the file (/data/keel/keel.toml), then keel apply"
TABLES_NOTES = {"wireguard.peer": PEERS_NOTE, "forward": FORWARDS_NOTE}
NO_LAN_NOTE = "no [lan] table in this config (one NIC): add one in the file to edit it"

# the schema's TOML type (describe.type_name) -> the widget that edits it
WIDGETS = {"boolean": "switch", "integer": "int", "string": "text",
           "string or integer": "text", "array of strings": "list",
           "array of integers": "list", "array of tables": "tables"}
_INT = re.compile(r"[+-]?[0-9](_?[0-9])*")
_TRUE, _FALSE = ("true", "yes", "on"), ("false", "no", "off")


@dataclass(frozen=True)
class Field:
    """One editable key. `kind`: switch (bool), select (a string with
    choices), int (with its range), text (a string with its syntax; a string
    or integer), list (an array, edited as comma-separated text), tables (an
    array of tables: shown, not edited here)."""

    section: str  # "wan"
    path: str  # "wan.shaping.upload_kbit"
    kind: str
    type: Any  # the annotation without None: int, str | int, tuple[str, ...]
    scalars: tuple[type, ...]  # the types of the value (of each element of a list)
    default: Any
    value: Any  # in the config given; None when unset (or its table is absent)
    rule: Rule
    item: Rule | None
    doc: str
    optional: bool  # None is allowed: empty text leaves the key out
    editable: bool = True
    note: str = ""  # why it is not editable here

    @property
    def key(self) -> str:
        """The path within its section: "shaping.upload_kbit"."""
        return self.path.split(".", 1)[1] if "." in self.path else self.path

    @property
    def unit(self) -> str:
        return self.rule.unit or (self.item.unit if self.item else "")

    @property
    def choices(self) -> tuple[str, ...]:
        return self.rule.choices

    @property
    def allowed(self) -> str:
        if self.item is not None and self.item.describe():
            return "comma-separated; each: " + self.item.describe()
        if self.kind == "list":
            return "comma-separated"
        return self.rule.describe()

    @property
    def help(self) -> str:
        allowed = self.allowed
        text = f"{self.doc} [{allowed}]" if allowed else self.doc
        if self.optional and self.kind in ("int", "text"):
            text += " (empty: left out)" if self.default is None else \
                f" (empty: {value_text(self.default)})"
        return text

    @property
    def text(self) -> str:
        """The value as it is edited (an Input's text)."""
        return value_text(self.value)


def value_text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (tuple, list)):
        return ", ".join(value_text(v) for v in value)
    return str(value)


@dataclass(frozen=True)
class _Spec:
    info: describe.KeyInfo
    kind: str
    type: Any
    scalars: tuple[type, ...]
    optional: bool


def _annotation(path: str) -> Any:
    cls: Any = Config
    parts = path.split(".")
    for part in parts[:-1]:
        cls = describe.kinds(typing.get_type_hints(cls)[part])[0]
    return typing.get_type_hints(cls)[parts[-1]]


@functools.cache
def _specs() -> dict[str, _Spec]:
    """Every key that is a form field, in schema order. Tables are sections
    (or groups of keys, like wan.shaping); the keys of an array of tables
    (wireguard.peer[].endpoint) are shown through the array."""
    out = {}
    for info in describe.walk():
        if info.type == "table" or "[]" in info.path:
            continue
        if info.type not in WIDGETS:
            raise TypeError(f"{info.path}: no widget for {info.type}")
        annotation = _annotation(info.path)
        types = describe.kinds(annotation)
        optional = type(None) in typing.get_args(annotation)
        kind = WIDGETS[info.type]
        if kind == "text" and info.type == "string" and info.rule.choices:
            kind = "select"
        item = describe.array_item(types[0])
        scalars = (item,) if item is not None else types
        out[info.path] = _Spec(info, kind, functools.reduce(operator.or_, types), scalars,
                               optional)
    return out


def sections() -> list[tuple[str, str]]:
    """The top-level tables and arrays of tables ([[forward]]), in schema
    order: (name, description)."""
    return [(info.path, info.doc) for info in describe.walk()
            if "." not in info.path and info.is_table]


def _get(obj: Any, path: str) -> tuple[Any, bool]:
    """The value at path, and whether its table is present."""
    for part in path.split("."):
        if obj is None:
            return None, False
        obj = getattr(obj, part)
    return obj, True


def fields(config: Config) -> list[Field]:
    """Every key of the schema as a form field, with its value in `config`."""
    out = []
    for path, spec in _specs().items():
        info = spec.info
        value, present = _get(config, path)
        editable, note = True, ""
        if spec.kind == "tables":
            editable, note = False, TABLES_NOTES.get(path, "edit these in the file")
        elif not present:
            editable, note = False, NO_LAN_NOTE if path.startswith("lan.") else "table absent"
        out.append(Field(path.split(".")[0], path, spec.kind, spec.type, spec.scalars,
                         info.default, value, info.rule, info.item, info.doc, spec.optional,
                         editable, note))
    return out


def tables_text(f: Field) -> str:
    """An array of tables, shown not edited: how many, and what each is."""
    items = f.value or ()
    if f.path == "forward":
        what = "; ".join(f"{fwd.name} {fwd.protocol} {fwd.port} to {fwd.to}" for fwd in items)
        noun = "forward"
    else:
        what = "; ".join(", ".join(getattr(p, "allowed_ips", ())) for p in items)
        noun = "peer"
    return f"{len(items)} {noun}{'' if len(items) == 1 else 's'}" + (f": {what}" if what else "")


# --- values typed as text, in the TOML-ready dict ------------------------------

LEAVE_OUT = object()  # the key is removed: its default applies


def _scalar(text: str, scalars: tuple[type, ...]) -> Any:
    """An int when one is wanted and the text is one; true/false likewise;
    else the text: the loader then says what is wrong with it."""
    if bool in scalars and text.lower() in _TRUE + _FALSE:
        return text.lower() in _TRUE
    if int in scalars and _INT.fullmatch(text):
        return int(text)
    return text


def parse_value(path: str, text: str | bool) -> Any:
    """The TOML value of one key typed as text (a Switch gives a bool), or
    LEAVE_OUT (empty text for a key that may be absent)."""
    spec = _specs()[path]
    if isinstance(text, bool):
        return text
    if spec.kind == "list":
        return [_scalar(part.strip(), spec.scalars) for part in text.split(",") if part.strip()]
    text = text.strip()
    if not text and spec.optional:
        return LEAVE_OUT
    return _scalar(text, spec.scalars)


def as_dict(config: Config) -> dict[str, Any]:
    """The config as a TOML-ready dict, every key spelled out."""
    return tomllib.loads(to_toml(config))


def with_value(config_dict: dict[str, Any], path: str, text: str | bool) -> dict[str, Any]:
    """A copy of the dict with one key set from its text (see parse_value)."""
    out = copy.deepcopy(config_dict)
    *tables, name = path.split(".")
    table = out
    for part in tables:
        table = table.setdefault(part, {})
    value = parse_value(path, text)
    if value is LEAVE_OUT:
        table.pop(name, None)
    else:
        table[name] = value
    return out


def _toml_lines(table: dict[str, Any], header: str, array: bool = False) -> list[str]:
    def is_tables(v: Any) -> bool:
        return isinstance(v, list) and bool(v) and all(isinstance(x, dict) for x in v)

    lines = [f"[[{header}]]" if array else f"[{header}]"] if header else []
    for name, value in table.items():
        if not isinstance(value, dict) and not is_tables(value):
            lines.append(f"{toml_key(name)} = {toml_value(value)}")
    for name, value in table.items():
        path = f"{header}.{toml_key(name)}" if header else toml_key(name)
        if isinstance(value, dict):
            lines += ["", *_toml_lines(value, path)]
        elif is_tables(value):
            for element in value:
                lines += ["", *_toml_lines(element, path, array=True)]
    return lines


def to_text(config_dict: dict[str, Any]) -> str:
    """A TOML-ready dict written as TOML (values of any type: the loader
    judges them)."""
    lines = _toml_lines(config_dict, "")
    while lines and not lines[0]:
        lines.pop(0)
    return "\n".join(lines) + "\n"


def problems(config_dict: dict[str, Any]) -> tuple[list[Problem], int]:
    """The loader's problems with this config (at most MAX_SHOWN), and how
    many more there are."""
    try:
        parse_config(to_text(config_dict), SOURCE)
    except ConfigError as err:
        return err.problems, err.more
    return [], 0


def check(config_dict: dict[str, Any]) -> list[str]:
    """The loader's verdict, one line per problem: "key.path: reason"."""
    found, more = problems(config_dict)
    lines = [str(p) for p in found]
    if more:
        lines.append(f"and {more} more problem{'' if more == 1 else 's'}")
    return lines


def proposed_text(config_dict: dict[str, Any]) -> str:
    """The config as keel writes it (every key spelled out, schema order);
    raises ConfigError when it is invalid."""
    return to_toml(parse_config(to_text(config_dict), SOURCE).config)


def owner(problem_path: str, paths: typing.Iterable[str]) -> str | None:
    """The field a problem belongs to: "firewall.open_tcp[1]" -> "firewall.open_tcp"."""
    best = None
    for path in paths:
        mine = problem_path == path or problem_path.startswith((path + "[", path + "."))
        if mine and (best is None or len(path) > len(best)):
            best = path
    return best


# --- diffs ----------------------------------------------------------------------

_HEADER = re.compile(r"^\[\[?(.+?)\]\]?$")


def _qualified(lines: list[str]) -> list[str]:
    """Each `key = value` line with its table's path in front of the key."""
    out, table = [], ""
    for line in lines:
        m = _HEADER.match(line)
        if m:
            table = m[1]
            out.append(line)
        elif " = " in line and table:
            out.append(f"{table}.{line}")
        else:
            out.append(line)
    return out


def diff(old_text: str, new_text: str) -> list[str]:
    """The changed lines of two TOML dumps, "-" old and "+" new; each key
    named by its full path ("-wan.shaping.upload_kbit = 0")."""
    old = _qualified(old_text.splitlines())
    new = _qualified(new_text.splitlines())
    out = []
    for line in difflib.unified_diff(old, new, lineterm="", n=0):
        if line.startswith(("---", "+++", "@@")):
            continue
        if line[1:].strip():
            out.append(line)
    return out


def canonical(text: str) -> str:
    """The text as keel writes it when it is a valid config, else as is."""
    try:
        return to_toml(parse_config(text, SOURCE).config)
    except ConfigError:
        return text


def changed_keys(old_text: str, new_text: str) -> list[str]:
    """The key paths whose values differ between two configs, in order."""
    out: list[str] = []
    for line in diff(canonical(old_text), canonical(new_text)):
        body = line[1:]
        name = body.split(" = ", 1)[0] if " = " in body else body
        if name not in out:
            out.append(name)
    return out
