"""Keys that were in the schema once and are gone. A file that still has one
keeps loading (an upgrade must never send a working router to its fallback):
the key is dropped before the schema sees it, with a warning that names it.

To remove a key from the schema, add its path here with the reason; a path
through an array of tables is written with [] ("wireguard.peer[].x")."""

from __future__ import annotations

from typing import Any

from keel.config.errors import Problem
from keel.config.keypath import join

REMOVED: dict[str, str] = {
    "wan.shaping.ecn_ingress": "CAKE has no ECN switch",
    "wan.shaping.ecn_egress": "CAKE has no ECN switch",
}


def warning(path: str, reason: str) -> Problem:
    return Problem(path, f"removed in this version ({reason}), ignored")


def drop_removed(data: dict[str, Any], removed: dict[str, str] | None = None
                 ) -> list[Problem]:
    """Take every removed key out of the parsed document (in place); one
    warning per key found, in the order of the table above."""
    warnings: list[Problem] = []
    for pattern, reason in (REMOVED if removed is None else removed).items():
        *parents, last = pattern.split(".")
        tables: list[tuple[str, Any]] = [("", data)]
        for part in parents:
            name = part.removesuffix("[]")
            found: list[tuple[str, Any]] = []
            for path, table in tables:
                child = table.get(name) if isinstance(table, dict) else None
                where = join(path, name)
                if part.endswith("[]") and isinstance(child, list):
                    found += [(f"{where}[{i}]", item) for i, item in enumerate(child)]
                elif not part.endswith("[]"):
                    found.append((where, child))
            tables = found
        for path, table in tables:
            if isinstance(table, dict) and last in table:
                del table[last]
                warnings.append(warning(join(path, last), reason))
    return warnings
