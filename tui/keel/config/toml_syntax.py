"""TOML text to a dict: the limits first (prescan.py), then tomllib, and
every way that fails as one clear problem naming the line: tomllib's own
messages with Python's notation taken out ("Cannot declare ('lan',) twice"
reads "cannot declare lan twice"), an unclosed multi-line string at the line
where it opened, and whatever else the parser raises, never a traceback."""

from __future__ import annotations

import ast
import re
import tomllib
from typing import Any

from keel.config.errors import ConfigError, Problem
from keel.config.keypath import segment
from keel.config.prescan import MAX_DEPTH, prescan

_AT_LINE = re.compile(r"\s*\((?:at line (\d+), column (\d+)|at end of document)\)")
# tomllib messages that show a key as a Python tuple or str repr
_KEY_REPR = re.compile(r"^(Cannot declare|Cannot mutate immutable namespace|"
                       r"Cannot redefine namespace|Duplicate inline table key) (.+?)( twice)?$",
                       re.S)


def _key_words(text: str) -> str | None:
    """('wan', 'shaping'), 'lan' or wan.shaping as keel writes a key path
    (secret-looking names redacted), or None."""
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        value = tuple(text.split("."))  # a Python that writes the key plainly
    if isinstance(value, str):
        value = (value,)
    if not isinstance(value, tuple) or not all(isinstance(v, str) for v in value):
        return None
    return ".".join(segment(v) for v in value) or '""'


def _readable(msg: str) -> str:
    m = _KEY_REPR.match(msg)
    if m:
        words = _key_words(m[2])
        msg = f"{m[1]} {words if words is not None else 'a key'}{m[3] or ''}"
    return msg[:1].lower() + msg[1:]


def syntax_problem(err: tomllib.TOMLDecodeError, unclosed_string_line: int | None = None
                   ) -> Problem:
    """A TOML syntax error, naming the line (and column)."""
    text = str(err)
    m = _AT_LINE.search(text)
    line = int(m[1]) if m and m[1] else None
    col = int(m[2]) if m and m[2] else None
    what = _readable(_AT_LINE.sub("", text).strip()) or "invalid TOML"
    if unclosed_string_line is not None and (line is None or line > unclosed_string_line):
        return Problem("", f"TOML syntax error at line {unclosed_string_line}: "
                           "a multi-line string opened here is never closed")
    where = f"line {line}, column {col}" if line else "the end of the file"
    return Problem("", f"TOML syntax error at {where}: {what}")


def parse_toml(text: str, source: str) -> dict[str, Any]:
    """The parsed document, or ConfigError naming the line and the reason."""
    scan = prescan(text)
    if scan.problems:
        raise ConfigError(source, scan.problems)
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        problem = syntax_problem(err, scan.unclosed_string_line)
    except RecursionError:
        problem = Problem("", f"nested deeper than {MAX_DEPTH} levels")
    except (ValueError, MemoryError) as err:  # tomllib's int() and the like
        problem = Problem("", f"cannot be parsed ({type(err).__name__})")
    raise ConfigError(source, [problem])
