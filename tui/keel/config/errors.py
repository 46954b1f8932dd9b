"""Config problems: each names the key path and the reason."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Problem:
    path: str  # "wireguard.peer[1].public_key"; "" for the whole file
    reason: str

    def __str__(self) -> str:
        return f"{self.path}: {self.reason}" if self.path else self.reason


class ConfigError(ValueError):
    """An invalid config: every problem found, in file order where possible."""

    def __init__(self, source: str, problems: list[Problem]) -> None:
        self.source = source
        self.problems = list(problems)
        super().__init__("\n".join(self.lines()))

    def lines(self) -> list[str]:
        """One line per problem: `FILE: key.path: reason`."""
        return [f"{self.source}: {p}" for p in self.problems]
