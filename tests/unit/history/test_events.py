"""The history's events, made from what changed between two looks; adaptive
CAKE's log lines read strictly (they are parsed, never trusted)."""

from __future__ import annotations

import json
import math

from hypothesis import given
from hypothesis import strategies as st

from keel.history.events import (
    apply_event,
    boot_event,
    handshake_events,
    parse_rate_lines,
    rate_events,
    upgrade_event,
)
from keel.metrics.snapshots import PeerStat
from keel.thresholds import HANDSHAKE_STALE_S

KEY_A, KEY_B = "A" * 43 + "=", "B" * 43 + "="


def peer(key: str, age: float | None) -> PeerStat:
    return PeerStat("wg0", key, "192.0.2.1:51820", ("10.99.0.2/32",), age, None, None)


def test_a_boot_says_what_its_apply_put_in_force():
    e = boot_event(100.0, "revision 4", True, "2026.11.1")
    assert e.kind == "boot" and "applied revision 4" in e.text and "fallback" in e.text
    assert "no config could be applied" in boot_event(1.0, None, True, "x").text


def test_an_apply_event_only_for_another_revision():
    assert apply_event(1.0, 3, 3) is None
    assert apply_event(1.0, 3, None) is None
    e = apply_event(1.0, 3, 4, "settings: shaping 9000/900")
    assert e is not None and e.data == {"revision": 4, "before": 3}
    assert e.text == "revision 4 in force: settings: shaping 9000/900"
    hostile = apply_event(1.0, 3, 5, "x\x1b[2Jy")
    assert hostile is not None and "\x1b" not in hostile.text


def test_an_upgrade_outcome_is_an_event_once():
    assert upgrade_event(None, "upgrade to 2 kept (slot B)", 50.0, "kept", "2") is not None
    assert upgrade_event(50.0, "upgrade to 2 kept (slot B)", 50.0, "kept", "2") is None


def test_handshakes_lost_and_back():
    events, state = handshake_events(10.0, {}, [peer(KEY_A, 5.0), peer(KEY_B, None)])
    assert events == [] and state == {KEY_A: True, KEY_B: False}  # first look: no event
    stale = HANDSHAKE_STALE_S + 30.0
    events, state = handshake_events(20.0, state, [peer(KEY_A, stale), peer(KEY_B, None)],
                                     {KEY_A: "home"})
    assert [(e.kind, e.text.split(":")[0]) for e in events] == [("handshake_lost", "home")]
    events, state = handshake_events(30.0, state, [peer(KEY_A, 2.0), peer(KEY_B, 1.0)])
    assert sorted(e.kind for e in events) == ["handshake_back", "handshake_back"]
    assert all(e.text.startswith("peer ") for e in events)  # no names given: the key's start


def line(t: float, way: str, before: int | None, rate: int, kind: str, reason: str) -> bytes:
    data = {"t": t, "dir": way, "rate_kbit": rate, "kind": kind, "reason": reason}
    if before is not None:
        data["from_kbit"] = before
    return json.dumps(data).encode()


def test_rate_changes_one_event_a_direction_with_the_largest_cuts_reason():
    lines = parse_rate_lines([
        line(1.0, "up", 4000, 3000, "cut", "delay +35 ms"),
        line(1.3, "up", 3000, 1100, "cut", "delay +80 ms: the line dropped"),
        line(1.5, "up", None, 1100, "skipped", "own CPU stalled"),  # no change written
        line(2.0, "up", 1100, 1200, "raise", "load, no delay"),
        line(2.1, "down", 9000, 9500, "raise", "load, no delay"),
        b'{"t": 3, "dir": "sideways", "rate_kbit": 1, "from_kbit": 2, "kind": "cut"}',
        b"not json", b"[1, 2]", b"x" * 10000,
    ])
    events = {e.data["way"]: e for e in rate_events(lines)}
    assert set(events) == {"up", "down"}
    up = events["up"]
    assert up.data == {"way": "up", "from_kbit": 4000, "rate_kbit": 1200, "changes": 3}
    assert "4000 -> 1200 kbit/s (3 changes): delay +80 ms: the line dropped" in up.text
    assert up.t == 2.0


FIELD = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=30),
                  st.sampled_from(["up", "down"]))
LOG_LINE = st.builds(lambda d: json.dumps(d).encode(), st.dictionaries(
    st.sampled_from(["t", "dir", "rate_kbit", "from_kbit", "kind", "reason"]), FIELD))


@given(st.lists(st.one_of(st.binary(max_size=300), LOG_LINE), max_size=30))
def test_any_log_bytes_parse_or_are_left_out(raw):
    parsed = parse_rate_lines(raw)
    for x in parsed:
        assert x.way in ("up", "down") and isinstance(x.rate_kbit, int) and x.rate_kbit >= 0
        assert math.isfinite(x.t)
    for e in rate_events(parsed):
        assert e.kind == "rate_change" and len(e.text) <= 300
        assert not any(ord(c) < 32 for c in e.text)
