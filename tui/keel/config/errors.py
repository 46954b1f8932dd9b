"""Config problems: each names the key path and the reason."""

from __future__ import annotations

from dataclasses import dataclass

from keel.shown import shown

MAX_SHOWN = 30  # problems listed; the rest are counted ("and N more problems")


@dataclass(frozen=True)
class Problem:
    path: str  # "wireguard.peer[1].public_key"; "" for the whole file
    reason: str

    def __str__(self) -> str:
        return f"{self.path}: {self.reason}" if self.path else self.reason


def _more(count: int) -> str:
    return f"and {count} more problem{'' if count == 1 else 's'}"


class ConfigError(ValueError):
    """An invalid config: the first MAX_SHOWN problems found, in file order
    where possible, and how many more there are."""

    def __init__(self, source: str, problems: list[Problem], more: int = 0) -> None:
        self.source = source
        self.problems = list(problems[:MAX_SHOWN])
        self.more = more + max(0, len(problems) - MAX_SHOWN)
        super().__init__("\n".join(self.lines()))

    def lines(self) -> list[str]:
        """One line per problem: `FILE: key.path: reason`; then the count of
        those left out. Key names are quoted JSON-style (keypath.segment) and
        a reason never repeats a value, so only the file's name is escaped
        here (keel.shown): a path given on the command line."""
        source = shown(self.source)
        out = [f"{source}: {p}" for p in self.problems]
        if self.more:
            out.append(f"{source}: {_more(self.more)}")
        return out

    def summary(self) -> str:
        """One line: the first problem, and how many more there are."""
        first = str(self.problems[0]) if self.problems else "invalid"
        more = len(self.problems) - 1 + self.more
        return f"{first} ({_more(more)})" if more else first
