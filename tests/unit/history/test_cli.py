"""`keel history` and `keel history events`, as a user runs them: on a store,
in 80 columns, as JSON and CSV, and a moment that does not parse named."""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from keel.history.cli import HEADER, point_line
from keel.history.point import Cake, Event, Latency, Point
from keel.history.store import HistoryStore

T0 = 1_795_000_000
TUI = Path(__file__).resolve().parents[3] / "tui"


def point(t: int, **kw) -> Point:
    return Point(t=t, latency={"tunnel": Latency(5.3, 12.9, 31.4, 0.05, 20),
                               "outside": Latency(3.1, 4.4, 6.0, 0.0, 20)},
                 wan_rx_bps=8_412_331.0, wan_tx_bps=912_004.0,
                 cake={"up": Cake(900, 887_312.0), "down": Cake(9000, 8_731_009.0)},
                 causes={"healthy": 10}, **kw)


@pytest.fixture
def store(tmp_path) -> Path:
    path = tmp_path / "history.db"
    with HistoryStore(path) as st:
        pts = [point(T0 + 10 * i) for i in range(1, 13)]
        pts[5] = dataclasses.replace(pts[5], causes={"bloat": 8, "healthy": 2},
                                     evidence="through the tunnel +180 ms; CAKE is off")
        st.write_batch(pts, [Event(T0 + 5, "boot", "boot of keel 1.0: applied revision 3"),
                             Event(T0 + 33, "rate_change", "CAKE up: 4000 -> 1100 kbit/s\x1b[2J")])
    return path


def keel(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "keel.cli", *args], capture_output=True,
                          text=True, env={**os.environ, "PYTHONPATH": str(TUI)}, check=False)


def test_a_point_a_line_in_80_columns(store):
    out = keel("history", "--since", f"@{T0}", "--until", f"@{T0 + 200}", "--store", str(store))
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0] == HEADER and len(lines) == 13
    assert all(len(line) <= 80 for line in lines), max(lines, key=len)
    assert lines[6].endswith("bloat 8s") and "5.3/12.9" in lines[6]
    assert lines[1].startswith("11-18 11:06:40")  # the interval's start, UTC


def test_json_and_csv_carry_every_figure(store):
    got = json.loads(keel("history", "--json", "--since", f"@{T0}", "--until", f"@{T0 + 30}",
                          "--store", str(store)).stdout)
    assert [Point.from_json(p) for p in got] == [point(T0 + 10), point(T0 + 20), point(T0 + 30)]
    rows = list(csv.DictReader(io.StringIO(keel(
        "history", "--csv", "--since", f"@{T0}", "--until", f"@{T0 + 30}", "--store",
        str(store)).stdout)))
    assert len(rows) == 3 and rows[0]["tunnel_p95_ms"] == "12.9"
    assert rows[0]["cake_down_rate_kbit"] == "9000" and rows[0]["causes"] == "healthy:10"


def test_events_in_words_escaped(store):
    out = keel("history", "events", "--since", f"@{T0}", "--store", str(store))
    assert out.returncode == 0
    lines = out.stdout.splitlines()
    assert lines[0].endswith("boot            boot of keel 1.0: applied revision 3")
    assert "\x1b" not in out.stdout and "\\x1b[2J" in lines[1]


def test_a_moment_that_does_not_parse_is_named_and_nothing_read(store):
    out = keel("history", "--since", "last tuesday", "--store", str(store))
    assert out.returncode == 2 and "last tuesday: not a moment" in out.stderr
    out = keel("history", "--since", "now", "--until", "1h", "--store", str(store))
    assert out.returncode == 2 and "is after --until" in out.stderr


def test_no_history_yet_says_where_it_comes_from(tmp_path):
    out = keel("history", "--store", str(tmp_path / "none.db"))
    assert out.returncode == 1 and "S42history" in out.stderr
    assert not (tmp_path / "none.db").exists()  # reading never makes one


def test_a_line_of_a_point_with_nothing_measured():
    assert point_line(Point(t=T0)).split()[2:] == ["-", "-", "-", "-/-", "-", "-"]
