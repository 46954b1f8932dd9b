"""keel.system.adaptive: the adaptive CAKE daemon's /run/keel/adapt.json,
read strictly: anything not what the daemon writes is "not adaptive" (None),
never an exception."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from keel.adaptive import daemon
from keel.system import adaptive
from keel.system.adaptive import AdaptState, AdaptWay, parse_state, read_state
from keel.system.source import FixtureSource

T = 1_800_000_000.0


def way(**over) -> dict:
    return {"rate_kbit": 1350, "min_kbit": 600, "base_kbit": 1350, "max_kbit": 1500,
            "through_kbit": 1210, "baseline_ms": 3.25, "dev": "eth0", **over}


def state(**over) -> dict:
    return {"t": T, "peer": "10.99.0.1", "answers": 4211, "peer_silent_s": 0.1,
            "up": way(), "down": way(rate_kbit=2100, min_kbit=1500, base_kbit=3600,
                                      max_kbit=4000, dev="ifb4eth0"), **over}


def test_what_the_daemon_writes_is_read():
    got = parse_state(json.dumps(state()))
    assert got == AdaptState(T, "10.99.0.1", 4211, 0.1,
                             AdaptWay(1350, 600, 1350, 1500, 1210, 3.25, "eth0"),
                             AdaptWay(2100, 1500, 3600, 4000, 1210, 3.25, "ifb4eth0"))
    assert got.way("up") is got.up and got.way("down") is got.down and got.way("x") is None


def test_one_direction_and_no_answer_yet():
    # "down": null is not what the daemon writes: it leaves the key out
    assert parse_state(json.dumps(state(down=None))) is None
    one = state(peer_silent_s=None)
    del one["down"]
    got = parse_state(json.dumps(one))
    assert got is not None and got.down is None and got.peer_silent_s is None
    assert parse_state(json.dumps(state(up=way(baseline_ms=None)))).up.baseline_ms is None


def test_the_daemons_own_snapshot_parses(tmp_path: Path):
    """The reader and the writer agree: a daemon's snapshot() (no socket
    traffic needed) reads back with its bounds."""
    plan = daemon.Plan("127.0.0.1", "eth0", "ifb4eth0", daemon._bounds("600:1350:1500"),
                       daemon._bounds("1500:3600:4000"), "lo", "127.0.0.1")
    d = daemon.Daemon(plan, run_dir=tmp_path, cake=object(), port=9)
    try:
        got = parse_state(json.dumps(d.snapshot()))
    finally:
        d.sock.close()
    assert got is not None and got.peer == "127.0.0.1" and got.peer_silent_s is None
    assert (got.up.min_kbit, got.up.base_kbit, got.up.max_kbit, got.up.dev) == \
        (600, 1350, 1500, "eth0")
    assert (got.down.rate_kbit, got.down.dev) == (3600, "ifb4eth0")


def test_the_path_is_the_daemons():
    assert str(daemon.RUN_DIR / daemon.STATE) == adaptive.STATE_PATH


BAD = [
    "", "null", "[]", "{", '"adapt"', "1e999",
    json.dumps({k: v for k, v in state().items() if k not in ("up", "down")}),  # nothing
    json.dumps(state(t="now")), json.dumps(state(t=float("nan"))),
    json.dumps(state(answers=-1)), json.dumps(state(answers=True)),
    json.dumps(state(answers=1.5)), json.dumps(state(peer="")),
    json.dumps(state(peer="10.99.0.1\x1b[2J")), json.dumps(state(peer_silent_s=-1)),
    json.dumps(state(up=way(min_kbit=0))), json.dumps(state(up=way(min_kbit=1400))),
    json.dumps(state(up=way(max_kbit=1000))), json.dumps(state(up=way(rate_kbit=2000))),
    json.dumps(state(up=way(rate_kbit=100))), json.dumps(state(up=way(base_kbit="1350"))),
    json.dumps(state(up=way(dev="eth0/../x"))), json.dumps(state(up=way(dev="a" * 16))),
    json.dumps(state(up=way(dev=""))), json.dumps(state(up=way(through_kbit=-5))),
    json.dumps(state(up=[1, 2])), json.dumps(state(up=way(baseline_ms="x"))),
    json.dumps({**state(), "up": {k: v for k, v in way().items() if k != "rate_kbit"}}),
    json.dumps(state(pad="x" * adaptive.MAX_BYTES)),  # too large
    "[" * 100_000,  # deeply nested
]


def test_what_the_daemon_does_not_write_is_not_adaptive():
    for text in BAD:
        assert parse_state(text) is None, text


@given(st.text(max_size=600))
def test_any_text_reads_without_an_exception(text):
    got = parse_state(text)
    assert got is None or isinstance(got, AdaptState)


JSONISH = st.recursive(
    st.none() | st.booleans() | st.integers(-10, 10**7) | st.floats(allow_nan=True)
    | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
        st.sampled_from(["t", "peer", "answers", "peer_silent_s", "up", "down", "rate_kbit",
                         "min_kbit", "base_kbit", "max_kbit", "through_kbit", "baseline_ms",
                         "dev"]), inner, max_size=8),
    max_leaves=30)


@given(JSONISH)
def test_any_json_reads_without_an_exception(value):
    got = parse_state(json.dumps(value))
    assert got is None or isinstance(got, AdaptState)


def test_the_reader_wants_a_fresh_file():
    source = FixtureSource({adaptive.STATE_PATH: json.dumps(state())})
    assert read_state(source, T + 2) is not None
    assert read_state(source, T + 60) is None  # the daemon died and left it
    assert read_state(source, T - 60) is None  # from a clock far ahead
    assert read_state(FixtureSource(), T) is None  # no daemon: no file
    assert read_state(FixtureSource({adaptive.STATE_PATH: "{"}), T) is None
