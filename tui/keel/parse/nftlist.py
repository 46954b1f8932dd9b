"""What nftables says is loaded: the ruleset as `nft -s -t list ruleset`
prints it (no counters, no set contents) made comparable, what differs
between two such listings, and the elements of the pairing set
(`nft -j list set inet keel pairing`) and which of those are not keel's.
Pure."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass

from keel.shown import shown


def normalized(listing: str) -> str:
    """The listing without trailing blanks and blank lines: what keel
    records right after it loads its ruleset and compares later."""
    return "\n".join(line.rstrip() for line in listing.splitlines() if line.strip())


def _placed(listing: str) -> list[tuple[str, str]]:
    """(where, line) for each line of a normalized listing: where is the
    table and chain (or set) the line sits in."""
    out = []
    table = block = ""
    for raw in listing.splitlines():
        line = raw.strip()
        if raw.startswith("table "):
            table, block = line.removesuffix("{").strip(), ""
        elif line.startswith(("chain ", "set ", "map ", "flowtable ")) and line.endswith("{"):
            block = line.removesuffix("{").strip()
        where = f"{table}, {block}" if block else table
        if line != "}":
            out.append((where, line))
    return out


def drift(recorded: str, live: str, limit: int = 4) -> list[str]:
    """What differs from the recorded listing in the live one, in words
    (lines added, lines gone, or the same lines in another order); [] when
    they are the same."""
    if normalized(recorded) == normalized(live):
        return []
    before, after = Counter(_placed(normalized(recorded))), Counter(_placed(normalized(live)))
    found = [f"added in {where}: {shown(line, 120)}"
             for (where, line) in (after - before).elements()]
    found += [f"gone from {where}: {shown(line, 120)}"
              for (where, line) in (before - after).elements()]
    if not found:
        found = ["the same rules in another order"]
    if len(found) > limit:
        found = [*found[:limit], f"and {len(found) - limit} more"]
    return found


@dataclass(frozen=True)
class Element:
    """One element of the pairing set: a TCP port open on the WAN."""
    port: int
    timeout_s: int | None  # None: added without a timeout (never expires)
    expires_s: int | None
    unread: str | None = None  # what nft printed when it is not a port (port is then 0)


def stray(e: Element, longest_s: int) -> str | None:
    """Why an element of the pairing set is not one `keel pair` added (in
    words, one line), or None when it is: keel adds a port with a kernel
    timeout of at most `longest_s`, so anything else (no timeout: open
    forever; a longer one; what is not a port) was put there by hand."""
    if e.unread is not None:
        return f"an element that is not a port ({shown(e.unread, 60)})"
    if e.timeout_s is None:
        return f"TCP {e.port} with no timeout"
    if not 0 < e.timeout_s <= longest_s:
        return (f"TCP {e.port} with a timeout of {e.timeout_s} s (keel pair sets "
                f"{longest_s} s at most)")
    return None


def _text(value: object) -> str:
    try:
        return json.dumps(value)[:200]
    except (ValueError, RecursionError):
        return type(value).__name__


def set_elements(text: str) -> list[Element]:
    """The elements of a set as `nft -j list set ...` prints them; [] when
    the text is not such a listing."""
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        return []
    found = []
    for entry in data.get("nftables", []) if isinstance(data, dict) else []:
        if not isinstance(entry, dict) or not isinstance(entry.get("set"), dict):
            continue
        for elem in entry["set"].get("elem", []):
            detail = elem.get("elem", {}) if isinstance(elem, dict) else {"val": elem}
            val = detail.get("val") if isinstance(detail, dict) else None
            timeout = detail.get("timeout") if isinstance(detail, dict) else None
            expires = detail.get("expires") if isinstance(detail, dict) else None
            timeout = timeout if type(timeout) is int else None
            expires = expires if type(expires) is int else None
            if type(val) is int and 0 <= val <= 65535:
                found.append(Element(val, timeout, expires))
            else:  # never keel's: still an element, seen (fail closed)
                found.append(Element(0, timeout, expires, unread=_text(elem)))
    return found
