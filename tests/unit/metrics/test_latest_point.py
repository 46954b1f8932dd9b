"""The history daemon's newest point as the metrics endpoint reads it
(keel.metrics.latest_point): the point and the verdicts of its last second
when fresh; None, never an exception, when missing, stale, too big or not
that shape."""

from __future__ import annotations

import json
import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from keel.history.point import Latency, Point
from keel.metrics import latest_point as lp

NOW = 1_800_000_015.0
POINT = Point(t=1_800_000_010, latency={"tunnel": Latency(20.0, 40.0, 50.0, 0.0, 20)},
              stall_worst_ms=2.0, causes={"healthy": 10})


def written(point: Point = POINT, at: float = NOW - 5, **extra: object) -> bytes:
    return json.dumps({"point": point.as_json(), "written": at, **extra}).encode()


def test_a_fresh_point_and_its_verdicts():
    got = lp.parse_latest(written(verdicts=[{"cause": "bloat", "severity": "warn", "text": "x"},
                                            {"cause": "healthy", "severity": "ok"}]), NOW)
    assert got is not None and got.point == POINT and got.written == NOW - 5
    assert got.verdicts == (("bloat", "warn"), ("healthy", "ok"))
    older = lp.parse_latest(written(), NOW)  # a daemon that writes no verdicts
    assert older is not None and older.verdicts is None


def test_read_from_a_file(tmp_path):
    path = tmp_path / "latest.json"
    assert lp.read_latest(path, NOW) is None  # none yet
    path.write_bytes(written())
    got = lp.read_latest(path, NOW)
    assert got is not None and got.point == POINT
    assert str(lp.LATEST) == "/run/keel/history/latest.json"


@pytest.mark.parametrize("data", [
    written(at=NOW - lp.STALE_S - 1),  # the daemon stopped
    written(at=NOW + lp.STALE_S + 1),  # written ahead of the clock: it stepped back
    written(at=float("nan")), written(at="soon"), written(at=True),
    b"", b"{", b"[]", b"null", b'"x"', json.dumps({"written": NOW}).encode(),
    json.dumps({"point": [], "written": NOW}).encode(),
    json.dumps({"point": {"t": "x"}, "written": NOW}).encode(),
    written(verdicts="bloat"), written(verdicts=[{"severity": "bad"}]),
    written(verdicts=[{"cause": "bloat", "severity": 3}]),
    b"\xff\xfe not utf-8", b"[" * 100_000, b"1e999",
    written(evidence="x" * lp.MAX_BYTES),  # past the size read
])
def test_anything_else_is_none(data):
    assert lp.parse_latest(data, NOW) is None


def test_what_is_kept_is_bounded():
    many = [{"cause": "c" * 100, "severity": "s" * 100}] * 50
    got = lp.parse_latest(written(verdicts=many), NOW)
    assert got is not None and got.verdicts is not None
    assert len(got.verdicts) == lp.MAX_VERDICTS
    assert got.verdicts[0] == ("c" * lp.MAX_NAME, "s" * lp.MAX_NAME)


def test_not_a_regular_file_is_none_and_never_blocks(tmp_path):
    fifo = tmp_path / "latest.json"
    os.mkfifo(fifo)
    assert lp.read_latest(fifo, NOW) is None  # a FIFO with no writer: returns at once
    assert lp.read_latest(tmp_path, NOW) is None  # a directory


@settings(max_examples=500, deadline=None)
@given(st.binary(max_size=300) | st.recursive(
    st.none() | st.booleans() | st.floats() | st.integers() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
        st.sampled_from(["point", "written", "verdicts", "t", "latency", "cause"]), inner,
        max_size=4), max_leaves=20).map(lambda v: json.dumps(v).encode()))
def test_no_bytes_raise(data):
    got = lp.parse_latest(data, NOW)
    assert got is None or isinstance(got.point, Point)
