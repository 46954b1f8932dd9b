"""WireGuard in force: `wg show all dump`, the one reader (private keys are
dropped by the parser, never kept)."""

from __future__ import annotations

from keel.parse.wgdump import WgInterface, parse_wg_dump
from keel.system.source import RealSource, Source, SourceError

WG_DUMP = ("wg", "show", "all", "dump")


def read_wireguard(source: Source | None = None) -> dict[str, WgInterface]:
    """Interfaces by name; SourceError when wg fails or prints nonsense."""
    text = (source or RealSource()).run(WG_DUMP)
    try:
        return parse_wg_dump(text)
    except (ValueError, IndexError) as err:
        raise SourceError(f"wg show all dump: {err}") from None
