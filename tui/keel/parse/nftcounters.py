"""The named counters of keel's table as `nft -j list counters table inet
keel` prints them (keel.render.nft.LIST_COUNTERS): {name: (packets, bytes)}.

Strict, with limits: at most MAX_BYTES of text, MAX_COUNTERS counters, a
name of at most MAX_NAME printable characters, counts that are integers of
0..2**64-1; the top level an object holding the array "nftables", whose
entries are the metainfo and counters of inet keel, each named once. Anything
else raises NftCountersError with one line saying what (never a value of the
input unescaped). Pure."""

from __future__ import annotations

import json
from typing import Any

from keel.shown import shown

__all__ = ["MAX_BYTES", "MAX_COUNTERS", "MAX_NAME", "NftCountersError", "parse_counters"]

MAX_BYTES = 1 << 20  # a counter lists in about 200 bytes
MAX_COUNTERS = 4096
MAX_NAME = 256  # nftables' own bound on an object's name (NFT_OBJ_MAXNAMELEN)
COUNT_MAX = (1 << 64) - 1  # the kernel's counters are 64-bit
FAMILY, TABLE = "inet", "keel"


class NftCountersError(ValueError):
    """The text is not nft's JSON listing of keel's counters; says why."""


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise NftCountersError(f"a JSON object names {shown(key, 40)} twice")
        out[key] = value
    return out


def _load(text: str) -> Any:
    if not isinstance(text, str):
        raise NftCountersError(f"not text but {type(text).__name__}")
    if len(text) > MAX_BYTES:
        raise NftCountersError(f"longer than {MAX_BYTES} characters: not a counters listing")
    try:
        return json.loads(text, object_pairs_hook=_unique_keys)
    except NftCountersError:
        raise
    except RecursionError:
        raise NftCountersError("JSON nested too deeply") from None
    except ValueError as err:  # JSONDecodeError, and int() past its digits
        where = f" at line {err.lineno}, column {err.colno}" if isinstance(
            err, json.JSONDecodeError) else ""
        raise NftCountersError(f"not JSON{where}") from None


def _count(counter: dict[str, Any], key: str, name: str) -> int:
    value = counter.get(key)
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= COUNT_MAX:
        raise NftCountersError(f"counter {shown(name, 60)}: {key} is not a count "
                               f"(an integer 0..2**64-1)")
    return value


def _name(counter: dict[str, Any]) -> str:
    name = counter.get("name")
    if not isinstance(name, str) or not name:
        raise NftCountersError("a counter without a name")
    if len(name) > MAX_NAME or not name.isprintable():
        raise NftCountersError(f"a counter's name is not a name of at most {MAX_NAME} "
                               f"printable characters: {shown(name, 60)}")
    return name


def _counter(counter: Any) -> tuple[str, tuple[int, int]]:
    if not isinstance(counter, dict):
        raise NftCountersError("a counter that is not an object")
    name = _name(counter)
    for key, wanted in (("family", FAMILY), ("table", TABLE)):
        if counter.get(key, wanted) != wanted:
            raise NftCountersError(f"counter {shown(name, 60)}: not of table {FAMILY} {TABLE}")
    return name, (_count(counter, "packets", name), _count(counter, "bytes", name))


def parse_counters(text: str) -> dict[str, tuple[int, int]]:
    """{counter name: (packets, bytes)} of the listing, in its order; {} for
    a table without counters. Raises NftCountersError."""
    data = _load(text)
    if not isinstance(data, dict) or not isinstance(data.get("nftables"), list):
        raise NftCountersError('not an nft listing: no "nftables" array at the top')
    if set(data) != {"nftables"}:
        raise NftCountersError('an nft listing holds "nftables" alone')
    found: dict[str, tuple[int, int]] = {}
    for entry in data["nftables"]:
        if not isinstance(entry, dict) or len(entry) != 1:
            raise NftCountersError("an entry that is not one object of one kind")
        kind, body = next(iter(entry.items()))
        if kind == "metainfo":
            continue
        if kind != "counter":
            raise NftCountersError(f"an entry that is not a counter: {shown(kind, 40)}")
        if len(found) >= MAX_COUNTERS:
            raise NftCountersError(f"more than {MAX_COUNTERS} counters")
        name, counts = _counter(body)
        if name in found:
            raise NftCountersError(f"counter {shown(name, 60)} listed twice")
        found[name] = counts
    return found
