"""What the forwards' figures are read from, the way keel.system reads: the
named counters through a Source (`nft -j list counters table inet keel`,
parsed strictly by keel.parse.nftcounters), and a target's answer to a TCP
connect. Neither raises: a failure is a value to show."""

from __future__ import annotations

import socket
from collections.abc import Callable

from keel.parse.nftcounters import NftCountersError, parse_counters
from keel.render.nft import LIST_COUNTERS
from keel.shown import shown
from keel.system.source import RealSource, Source, SourceError

CONNECT_TIMEOUT_S = 2.0
ANSWERS, REFUSED, NO_ANSWER, NOT_CHECKED = "answers", "refused", "no answer", "not checked"

Counters = dict[str, tuple[int, int]]
Connect = Callable[[tuple[str, int], float], socket.socket]


def read_counters(source: Source | None = None) -> tuple[Counters | None, str]:
    """({counter name: (packets, bytes)}, "") of keel's table, or (None, why)
    when nft cannot list them (no table keel, no nft, not root) or lists
    what is not a listing of counters."""
    try:
        text = (source or RealSource()).run(LIST_COUNTERS)
    except SourceError as err:
        return None, f"cannot list them ({shown(_first_line(str(err)), 120)})"
    try:
        return parse_counters(text), ""
    except NftCountersError as err:
        return None, f"nft listed what keel cannot read: {err}"


def _first_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[0] if lines else "failed"


def tcp_status(address: str, port: int, timeout_s: float = CONNECT_TIMEOUT_S,
               connect: Connect = socket.create_connection) -> str:
    """A TCP connect to address:port (an IPv4 literal: no name is looked
    up): ANSWERS (it was accepted, then closed at once), REFUSED (a reset:
    the host is there, nothing listens), or NO_ANSWER (nothing within
    `timeout_s`, or no route to it)."""
    try:
        with connect((address, port), timeout_s):
            return ANSWERS
    except ConnectionRefusedError:
        return REFUSED
    except (OSError, ValueError, OverflowError):  # timed out, unreachable, a bad address
        return NO_ANSWER
