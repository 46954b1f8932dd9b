"""Limits checked on the text of keel.toml before tomllib parses it.

tomllib recurses once per level of nesting (a few hundred levels of `[[[`
end in RecursionError) and turns integer literals into Python ints (one of
more than 4300 digits raises ValueError). So a cheap scan goes over the text
first, a lexer that knows TOML's strings and comments (a bracket inside a
string or a comment is not a level), and counts the levels: each segment of
a table header or of a dotted key, each `[` of an array and each `{` of an
inline table. It stops at the first thing that is not TOML: tomllib then
reports the syntax error itself. It also notes where an unclosed multi-line
string opened, which tomllib reports only at the end of the file.

Nothing here recurses, and every step moves forward through the text.
"""

from __future__ import annotations

import contextlib
import re
from dataclasses import dataclass, field

from keel.config.errors import Problem

MAX_DEPTH = 32  # keel's deepest key, all inline, is 7 levels
MAX_INT_DIGITS = 20  # a 64-bit integer has at most 20 digits

_WS = re.compile(r"[ \t\r]*")
_COMMENT = re.compile(r"#[^\n]*")
_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")
_BARE_VALUE = re.compile(r"[A-Za-z0-9_+.:-]+")  # numbers, booleans, dates, inf, nan
_BASIC = re.compile(r'"(?:[^"\\\n]|\\[^\n])*"')
_LITERAL = re.compile(r"'[^'\n]*'")
_ML_BASIC = re.compile(r'"""(?:[^"\\]|\\[\s\S]|"(?!""))*"{3,5}')
_ML_LITERAL = re.compile(r"'''(?:[^']|'(?!''))*'{3,5}")
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_SPACE_TIME = re.compile(r" (?=\d{2}:)")
_INTEGER = re.compile(r"[+-]?(?:0x([0-9A-Fa-f_]+)|0o([0-7_]+)|0b([01_]+)|([0-9_]+))")

# fast paths, for the common shapes of a long file: a whole `key = scalar`
# line, and a run of scalars and commas inside an array
_ONE_LINE_STRING = r"\"(?!\"\")(?:[^\"\\\n]|\\[^\n])*\"|'(?!'')[^'\n]*'"
_SIMPLE_LINE = re.compile(
    r"[ \t]*([A-Za-z0-9_-]+(?:[ \t]*\.[ \t]*[A-Za-z0-9_-]+)*)[ \t]*=[ \t]*"
    r"(?:" + _ONE_LINE_STRING + r"|([A-Za-z0-9_+.:-]+))"
    r"[ \t\r]*(?:#[^\n]*)?(?:\n|\Z)")
_ARRAY_RUN = re.compile(r"(?:[^][{}\"'#\n]|" + _ONE_LINE_STRING + r")+")
_STRINGS = re.compile(_ONE_LINE_STRING)
_D = MAX_INT_DIGITS + 1
_LONG_INT = re.compile(
    rf"(?<![A-Za-z0-9_+.:-])[+-]?(?:0x[0-9A-Fa-f_]{{{_D},}}|0o[0-7_]{{{_D},}}|0b[01_]{{{_D},}}"
    rf"|[0-9_]{{{_D},}})(?![A-Za-z0-9_+.:-])")

_KEY, _VALUE, _AFTER = "key", "value", "after"


@dataclass
class Prescan:
    """What the scan found: problems that stop the parse, and the line where
    an unclosed multi-line string opened (None if there is none)."""

    problems: list[Problem] = field(default_factory=list)
    unclosed_string_line: int | None = None


class _Stop(Exception):
    """The text is not TOML from here on: tomllib will say why."""


@dataclass
class _Frame:
    kind: str  # "[" or "{"
    level: int  # the level of the array or inline table itself


class _Scanner:
    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0
        self.line = 1
        self.out = Prescan()
        self.too_deep = False

    # --- small steps ---------------------------------------------------------
    def peek(self, n: int = 1) -> str:
        return self.text[self.pos:self.pos + n]

    def skip(self, pattern: re.Pattern[str]) -> str:
        m = pattern.match(self.text, self.pos)
        if not m:
            return ""
        self.pos = m.end()
        return m.group()

    def count_lines(self, token: str) -> None:
        self.line += token.count("\n")

    def level_at(self, level: int) -> None:
        if level > MAX_DEPTH and not self.too_deep:
            self.too_deep = True
            self.out.problems.append(Problem(
                "", f"line {self.line}: nested deeper than {MAX_DEPTH} levels "
                    "(tables, dotted keys, arrays and inline tables)"))
            raise _Stop

    def string(self) -> None:
        """A string of any of TOML's four kinds, at self.pos."""
        for opener, pattern in (('"""', _ML_BASIC), ("'''", _ML_LITERAL)):
            if self.text.startswith(opener, self.pos):
                token = self.skip(pattern)
                if not token:
                    self.out.unclosed_string_line = self.line
                    raise _Stop
                self.count_lines(token)
                return
        if not self.skip(_BASIC if self.peek() == '"' else _LITERAL):
            raise _Stop

    def key(self) -> int:
        """A possibly dotted key; returns its number of segments."""
        segments = 0
        while True:
            self.skip(_WS)
            if self.peek() in ('"', "'"):
                if self.peek(3) in ('"""', "'''"):
                    raise _Stop  # not allowed in a key
                self.string()
            elif not self.skip(_BARE_KEY):
                raise _Stop
            segments += 1
            self.skip(_WS)
            if self.peek() != ".":
                return segments
            self.pos += 1

    def integer(self, token: str) -> None:
        """A problem if the token is an integer of too many digits."""
        m = _INTEGER.fullmatch(token)
        if m:
            digits = next(g for g in m.groups() if g is not None).replace("_", "")
            if len(digits) > MAX_INT_DIGITS:
                self.out.problems.append(Problem(
                    "", f"line {self.line}: an integer of {len(digits)} digits "
                        f"(at most {MAX_INT_DIGITS})"))

    def bare_value(self) -> None:
        token = self.skip(_BARE_VALUE)
        if not token:
            raise _Stop
        if _DATE.fullmatch(token) and self.skip(_SPACE_TIME):
            self.skip(_BARE_VALUE)  # a date and a time apart by a space
            return
        self.integer(token)

    def simple_line(self, table_level: int) -> bool:
        """A whole `key = scalar` line at once, if the line is one."""
        m = _SIMPLE_LINE.match(self.text, self.pos)
        if not m:
            return False
        self.level_at(table_level + m[1].count(".") + 1)
        if m[2]:
            self.integer(m[2])
        self.pos = m.end()
        self.line += m.group().endswith("\n")
        return True

    def array_run(self) -> str | None:
        """Scalars and commas inside an array, up to the next bracket, brace,
        multi-line string, comment or new line: what to expect next (None
        when there is no such run here)."""
        m = _ARRAY_RUN.match(self.text, self.pos)
        if not m:
            return None
        run = m.group()
        if "\"" in run or "'" in run:
            run = _STRINGS.sub('""', run)
        for n in _LONG_INT.finditer(run):
            self.integer(n.group().lstrip("+-"))
        self.pos = m.end()
        return _VALUE if run.rstrip(" \t\r").endswith(",") else _AFTER

    # --- the document --------------------------------------------------------
    def header(self) -> int:
        """`[a.b]` or `[[a.b]]` at the start of a line: the table's level."""
        array = self.text.startswith("[[", self.pos)
        self.pos += 2 if array else 1
        level = self.key() + int(array)
        self.level_at(level)
        closer = "]]" if array else "]"
        if not self.text.startswith(closer, self.pos):
            raise _Stop
        self.pos += len(closer)
        return level

    def run(self) -> Prescan:
        with contextlib.suppress(_Stop):
            self._scan()
        return self.out

    def _scan(self) -> None:
        text = self.text
        table_level = 0
        level = 0
        stack: list[_Frame] = []
        expect = _KEY
        line_start = True
        while self.pos < len(text):
            self.skip(_WS)
            if self.pos >= len(text):
                break
            ch = text[self.pos]
            if ch == "#":
                self.skip(_COMMENT)
                continue
            if ch == "\n":
                self.pos += 1
                self.line += 1
                if not stack:
                    if expect == _VALUE:
                        raise _Stop  # `key =` and nothing
                    expect, level, line_start = _KEY, table_level, True
                continue
            if (stack and stack[-1].kind == "[" and ch not in "[]{}"
                    and not text.startswith(('"""', "'''"), self.pos)):
                after_run = self.array_run()
                if after_run is not None:
                    expect, level = after_run, stack[-1].level
                    continue
            if expect == _KEY:
                if line_start and not stack and self.simple_line(table_level):
                    continue
                if ch == "[" and not stack and line_start:
                    table_level = level = self.header()
                    expect = _AFTER
                elif ch == "}" and stack and stack[-1].kind == "{":
                    level = stack.pop().level - 1  # an empty inline table
                    expect = _AFTER
                else:
                    level += self.key()
                    self.level_at(level)
                    self.skip(_WS)
                    if self.peek() != "=":
                        raise _Stop
                    self.pos += 1
                    expect = _VALUE
            elif expect == _VALUE:
                if ch in "[{":
                    self.pos += 1
                    stack.append(_Frame(ch, level + 1))
                    level += 1
                    self.level_at(level)
                    expect = _KEY if ch == "{" else _VALUE
                elif ch == "]" and stack and stack[-1].kind == "[":
                    self.pos += 1  # an empty array, or a trailing comma
                    level = stack.pop().level - 1
                    expect = _AFTER
                elif ch in "\"'":
                    self.string()
                    expect = _AFTER
                else:
                    self.bare_value()
                    expect = _AFTER
            else:  # _AFTER a value: a comma or a closing bracket
                if not stack:
                    raise _Stop  # tomllib: "Expected newline or end of document"
                top = stack[-1]
                self.pos += 1
                if ch == ",":
                    level = top.level
                    expect = _KEY if top.kind == "{" else _VALUE
                elif (ch, top.kind) in (("]", "["), ("}", "{")):
                    level = stack.pop().level - 1
                else:
                    raise _Stop
            line_start = False


def prescan(text: str) -> Prescan:
    """Scan the text for what tomllib must not be given (see the module)."""
    return _Scanner(text).run()
