"""The qdiscs in force: `tc -s -j qdisc show`, the one reader."""

from __future__ import annotations

import json

from keel.parse.tcqdisc import Qdisc, parse_qdiscs
from keel.system.source import RealSource, Source, SourceError


def tc_qdisc_argv(dev: str | None = None) -> list[str]:
    return ["tc", "-s", "-j", "qdisc", "show", *(["dev", dev] if dev else [])]


def read_qdiscs(source: Source | None = None, dev: str | None = None) -> list[Qdisc]:
    """Every qdisc (of `dev` only, if given); SourceError when tc fails or
    prints what is not JSON."""
    text = (source or RealSource()).run(tc_qdisc_argv(dev))
    try:
        return parse_qdiscs(json.loads(text) if text.strip() else [], dev)
    except (ValueError, TypeError, AttributeError) as err:
        raise SourceError(f"tc qdisc show: not what tc prints: {err}") from None


def root_qdisc(qdiscs: list[Qdisc], dev: str) -> Qdisc | None:
    return next((q for q in qdiscs if q.dev == dev and q.root), None)


def cake_roots(qdiscs: list[Qdisc]) -> list[str]:
    """Devices with CAKE at their root."""
    return [q.dev for q in qdiscs if q.root and q.is_cake]
