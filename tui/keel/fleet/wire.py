"""The fleet channel's messages, and their strict parsers (pure).

One TCP connection carries one request (the hub's) and one reply (the
edge's), each one line of JSON ending in a newline. Either side holds what
comes from the other for hostile: a line past its bound, bytes that are not
UTF-8 JSON, an object with a key it does not know, a value of the wrong type
or out of its range: each is refused whole with WireError, naming the field
(of the bytes, at most an unknown key's name, escaped and cut short).

Requests (hub -> edge):
  {"op": "status"}                        the edge's health now (Status)
  {"op": "routes", "routes": [PREFIX...]} the routes to the other edges' LANs
  {"op": "upgrade", "size": N, "sha256": HEX, "tunnel_wait": S}
                                          then exactly N bytes: a bundle for the
                                          edge to check and install (Offer)
Replies (edge -> hub):
  {"ok": true, "status": {...}}           to status
  {"ok": true, "routes": [PREFIX...]}     to routes: what the edge now routes
  {"ok": true, "installed": {"version": V, "slot": S}}
                                          to upgrade: installed, the edge reboots
  {"ok": false, "error": "..."}           a refusal, in one line
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import asdict, dataclass, field
from typing import Any

from keel.shown import shown
from keel.thresholds import UPGRADE_HANDSHAKE_WAIT_RANGE_S
from keel.upgrade.fetch import MAX_BUNDLE  # a larger offer is no bundle

VERSION = 1
MAX_REQUEST = 8 * 1024  # bytes of a request line (64 routes fit four times over)
MAX_REPLY = 64 * 1024  # bytes of a reply line
MAX_ROUTES = 64
MAX_TEXT = 300  # characters of a verdict's words, an upgrade's reason, an error
MAX_CAUSES = 8
NAME = re.compile(r"[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?")
PREFIX = re.compile(r"[0-9A-Fa-f:.]{2,43}/[0-9]{1,3}")
CAUSE = re.compile(r"[a-z][a-z_]{0,15}")
SLOTS = ("A", "B")
# keel.upgrade.record's Outcome.result: kept, rolled back (the gate), rollback
# (the user's), and an install that failed or was cut
RESULTS = ("kept", "rolled back", "rollback", "install failed", "install cut")


MIN_BUNDLE = 4096  # bytes: smaller is no bundle
SHA256 = re.compile(r"[0-9a-f]{64}")
TUNNEL_WAIT_S = UPGRADE_HANDSHAKE_WAIT_RANGE_S


class WireError(ValueError):
    """Bytes from the other side that are not a message: what, in one line."""


@dataclass(frozen=True)
class Upgrade:
    """The edge's last upgrade's outcome."""

    result: str
    version: str
    reason: str = ""
    at: float = 0.0


@dataclass(frozen=True)
class Status:
    """An edge's health as it answers its hub: who it is, what it runs, its
    latency now (the newest point of its history) and over the last day, its
    CAKE rates, its verdict in words, and the routes it has from the hub."""

    name: str
    version: str
    at: float  # the edge's clock when it answered
    uptime_s: float
    slot: str | None = None
    last_upgrade: Upgrade | None = None
    tunnel_p95_ms: float | None = None
    outside_p95_ms: float | None = None
    loss: float | None = None  # of the tunnel's probes, 0..1
    day_p95_ms: float | None = None  # the worst p95 through the tunnel over 24 h
    cake_up_kbit: int | None = None
    cake_down_kbit: int | None = None
    verdict: str = ""  # the worst cause's words now; "" when healthy
    causes: tuple[str, ...] = ()
    routes: tuple[str, ...] = field(default_factory=tuple)

    def as_json(self) -> dict[str, Any]:
        out = asdict(self)
        out["causes"], out["routes"] = list(self.causes), list(self.routes)
        return out


# --- framing ---------------------------------------------------------------------

def encode(message: dict[str, Any]) -> bytes:
    return json.dumps(message, separators=(",", ":"), allow_nan=False).encode() + b"\n"


def _object(line: bytes, limit: int, what: str) -> dict[str, Any]:
    if len(line) > limit:
        raise WireError(f"{what}: longer than {limit} bytes")
    if not line.endswith(b"\n"):
        raise WireError(f"{what}: not a whole line")
    try:
        value = json.loads(line.decode("utf-8"), parse_constant=_no_constant)
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise WireError(f"{what}: not JSON") from None
    if not isinstance(value, dict):
        raise WireError(f"{what}: not a JSON object")
    return value


def _no_constant(name: str) -> float:
    raise ValueError(name)  # NaN, Infinity: not JSON


def _keys(obj: dict[str, Any], allowed: set[str], where: str) -> None:
    unknown = sorted(set(obj) - allowed)
    if unknown:
        raise WireError(f"{where}: unknown key {shown(unknown[0], 40)}")


def _text(value: Any, where: str, most: int = MAX_TEXT) -> str:
    if not isinstance(value, str) or len(value) > most:
        raise WireError(f"{where}: not a text of at most {most} characters")
    if any(ord(c) < 0x20 or 0x7f <= ord(c) < 0xa0 for c in value):
        raise WireError(f"{where}: a control character")
    return value


def _number(value: Any, where: str, low: float, high: float) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) \
            or not math.isfinite(value) or not low <= value <= high:
        raise WireError(f"{where}: not a number in {low:g}..{high:g}")
    return float(value)


def _optional(value: Any, where: str, low: float, high: float) -> float | None:
    return None if value is None else _number(value, where, low, high)


def _prefixes(value: Any, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or len(value) > MAX_ROUTES:
        raise WireError(f"{where}: not a list of at most {MAX_ROUTES} prefixes")
    out = []
    for n, item in enumerate(value):
        if not isinstance(item, str) or not PREFIX.fullmatch(item):
            raise WireError(f"{where}[{n}]: not a prefix")
        out.append(item)
    return tuple(out)


# --- requests (the edge parses them) -------------------------------------------------

@dataclass(frozen=True)
class Offer:
    """A bundle the hub sends after its request line: `size` bytes whose
    SHA-256 is `sha256`; the new slot has `tunnel_wait` s to bring the
    tunnel back (keel upgrade --tunnel-wait)."""

    size: int
    sha256: str
    tunnel_wait: int


@dataclass(frozen=True)
class Request:
    op: str
    routes: tuple[str, ...] = ()
    offer: Offer | None = None


def _integer(value: Any, where: str, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise WireError(f"{where}: not a whole number in {low}..{high}")
    return value


def parse_request(line: bytes) -> Request:
    obj = _object(line, MAX_REQUEST, "request")
    op = obj.get("op")
    if op == "status":
        _keys(obj, {"op", "v"}, "status request")
        return Request("status")
    if op == "routes":
        _keys(obj, {"op", "v", "routes"}, "routes request")
        return Request("routes", _prefixes(obj.get("routes"), "routes"))
    if op == "upgrade":
        _keys(obj, {"op", "v", "size", "sha256", "tunnel_wait"}, "upgrade request")
        digest = obj.get("sha256")
        if not isinstance(digest, str) or not SHA256.fullmatch(digest):
            raise WireError("sha256: not 64 lowercase hex digits")
        return Request("upgrade", offer=Offer(
            _integer(obj.get("size"), "size", MIN_BUNDLE, MAX_BUNDLE), digest,
            _integer(obj.get("tunnel_wait"), "tunnel_wait", *TUNNEL_WAIT_S)))
    raise WireError("request: op is not status, routes or upgrade")


def status_request() -> bytes:
    return encode({"v": VERSION, "op": "status"})


def routes_request(routes: tuple[str, ...]) -> bytes:
    return encode({"v": VERSION, "op": "routes", "routes": list(routes)})


def upgrade_request(offer: Offer) -> bytes:
    return encode({"v": VERSION, "op": "upgrade", "size": offer.size, "sha256": offer.sha256,
                   "tunnel_wait": offer.tunnel_wait})


# --- replies (the hub parses them) ---------------------------------------------------

def refusal(error: str) -> bytes:
    return encode({"ok": False, "error": shown(error, MAX_TEXT)})


def status_reply(status: Status) -> bytes:
    return encode({"ok": True, "status": status.as_json()})


def routes_reply(routes: tuple[str, ...]) -> bytes:
    return encode({"ok": True, "routes": list(routes)})


def installed_reply(version: str, slot: str) -> bytes:
    return encode({"ok": True, "installed": {"version": version, "slot": slot}})


def _reply(line: bytes) -> dict[str, Any]:
    obj = _object(line, MAX_REPLY, "reply")
    ok = obj.get("ok")
    if ok is False:
        _keys(obj, {"ok", "error"}, "refusal")
        raise WireError(f"the edge refused: {_text(obj.get('error'), 'error')}")
    if ok is not True:
        raise WireError("reply: ok is not true or false")
    return obj


def parse_routes_reply(line: bytes) -> tuple[str, ...]:
    obj = _reply(line)
    _keys(obj, {"ok", "routes"}, "routes reply")
    return _prefixes(obj.get("routes"), "routes")


def parse_installed_reply(line: bytes) -> tuple[str, str]:
    """(the version installed, the slot it went into)."""
    obj = _reply(line)
    _keys(obj, {"ok", "installed"}, "upgrade reply")
    done = obj.get("installed")
    if not isinstance(done, dict):
        raise WireError("installed: not an object")
    _keys(done, {"version", "slot"}, "installed")
    version = _text(done.get("version"), "installed.version", 64)
    if not version:
        raise WireError("installed.version: empty")
    slot = done.get("slot")
    if slot not in SLOTS:
        raise WireError("installed.slot: not A or B")
    return version, slot


def _upgrade(value: Any) -> Upgrade | None:
    if value is None:
        return None
    if not isinstance(value, dict):
        raise WireError("last_upgrade: not an object")
    _keys(value, {"result", "version", "reason", "at"}, "last_upgrade")
    result = value.get("result")
    if result not in RESULTS:
        raise WireError("last_upgrade.result: not one of " + ", ".join(RESULTS))
    return Upgrade(result, _text(value.get("version"), "last_upgrade.version", 64),
                   _text(value.get("reason", ""), "last_upgrade.reason"),
                   _number(value.get("at", 0.0), "last_upgrade.at", 0, 1e11))


STATUS_KEYS = {f.name for f in Status.__dataclass_fields__.values()}  # type: ignore[attr-defined]


def parse_status_reply(line: bytes) -> Status:
    obj = _reply(line)
    _keys(obj, {"ok", "status"}, "status reply")
    return parse_status(obj.get("status"))


def parse_status(s: Any) -> Status:
    """A status object (a reply's, or one the hub's watcher kept), strictly."""
    if not isinstance(s, dict):
        raise WireError("status: not an object")
    _keys(s, STATUS_KEYS, "status")
    name = _text(s.get("name"), "status.name", 63)
    if not NAME.fullmatch(name):
        raise WireError("status.name: not a host name")
    slot = s.get("slot")
    if slot is not None and slot not in SLOTS:
        raise WireError("status.slot: not A, B or null")
    causes = s.get("causes", [])
    if not isinstance(causes, list) or len(causes) > MAX_CAUSES or not all(
            isinstance(c, str) and CAUSE.fullmatch(c) for c in causes):
        raise WireError(f"status.causes: not a list of at most {MAX_CAUSES} cause names")

    def kbit(key: str) -> int | None:
        value = _optional(s.get(key), f"status.{key}", 0, 100_000_000)
        return None if value is None else int(value)

    return Status(
        name=name, version=_text(s.get("version"), "status.version", 64),
        at=_number(s.get("at"), "status.at", 0, 1e11),
        uptime_s=_number(s.get("uptime_s"), "status.uptime_s", 0, 1e10),
        slot=slot, last_upgrade=_upgrade(s.get("last_upgrade")),
        tunnel_p95_ms=_optional(s.get("tunnel_p95_ms"), "status.tunnel_p95_ms", 0, 1e6),
        outside_p95_ms=_optional(s.get("outside_p95_ms"), "status.outside_p95_ms", 0, 1e6),
        loss=_optional(s.get("loss"), "status.loss", 0, 1),
        day_p95_ms=_optional(s.get("day_p95_ms"), "status.day_p95_ms", 0, 1e6),
        cake_up_kbit=kbit("cake_up_kbit"), cake_down_kbit=kbit("cake_down_kbit"),
        verdict=_text(s.get("verdict", ""), "status.verdict"),
        causes=tuple(causes), routes=_prefixes(s.get("routes", []), "status.routes"))
