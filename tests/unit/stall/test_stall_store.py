"""keel.stall.store: the stall meter's JSON-lines log, bounded by an atomic
trim, and read from its tail."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from keel.stall import store
from keel.stall.store import StallLog, read_recent
from keel.stall.summary import CpuStall, StallSecond

T0 = 1_700_000_000.0


def second(t: float, max_ms: float = 0.5) -> StallSecond:
    return StallSecond(t=t, per_cpu=(CpuStall(0, 100, max_ms / 2, max_ms, 10.0),),
                       p99_ms=max_ms / 2, max_ms=max_ms, stalled_ms=10.0, steal=0.0,
                       realtime=True)


def test_append_one_line_per_second_and_read_them_back(tmp_path):
    path = tmp_path / "run" / "keel" / "stall.jsonl"  # the directory is made
    log = StallLog(path)
    for i in range(10):
        log.append(second(T0 + i, max_ms=float(i)))
    lines = path.read_text().splitlines()
    assert len(lines) == 10 == log.lines
    assert json.loads(lines[3])["max_ms"] == 3.0
    recent = read_recent(path, 3, now=T0 + 9)
    assert [s.t for s in recent] == [T0 + 7, T0 + 8, T0 + 9]  # oldest first
    assert recent[-1] == second(T0 + 9, max_ms=9.0)
    assert [s.t for s in read_recent(path, 100, now=T0 + 9)] == [T0 + i for i in range(10)]
    assert read_recent(path, 3, now=T0 + 100) == []
    assert [s.t for s in read_recent(path, 3, now=T0 + 5)] == [T0 + 3, T0 + 4, T0 + 5]


def test_read_recent_defaults_to_the_wall_clock(tmp_path):
    path = tmp_path / "stall.jsonl"
    log = StallLog(path)
    now = time.time()
    log.append(second(now - 120))
    log.append(second(now - 1))
    assert [s.t for s in read_recent(path, 60)] == [now - 1]


def test_a_missing_file_reads_as_nothing(tmp_path):
    assert read_recent(tmp_path / "none.jsonl", 60) == []


def test_bad_and_unfinished_lines_are_skipped(tmp_path):
    path = tmp_path / "stall.jsonl"
    good = [json.dumps(second(T0 + i).as_dict()) for i in range(4)]
    path.write_text("\n".join([good[0], "not json", good[1], '{"t": 1}', "", good[2],
                               "[1, 2]", good[3]]) + "\n" + good[3][:25])
    assert [s.t for s in read_recent(path, 60, now=T0 + 10)] == [T0 + i for i in range(4)]


def test_an_unfinished_last_line_is_closed_before_appending(tmp_path):
    """A meter killed mid-write leaves half a line; the next record must not
    glue onto it."""
    path = tmp_path / "stall.jsonl"
    path.write_text(json.dumps(second(T0).as_dict()) + "\n" + '{"t": 17000')
    log = StallLog(path)
    assert log.lines == 2
    log.append(second(T0 + 1))
    assert [s.t for s in read_recent(path, 60, now=T0 + 1)] == [T0, T0 + 1]


def test_the_log_is_trimmed_atomically_to_the_last_lines(tmp_path, monkeypatch):
    path = tmp_path / "stall.jsonl"
    log = StallLog(path, max_lines=20, keep_lines=10)
    replaced: list[tuple[str, str]] = []
    real_replace = store.os.replace

    def spy(src, dst):
        replaced.append((Path(src).name, Path(dst).name))
        real_replace(src, dst)

    monkeypatch.setattr(store.os, "replace", spy)
    for i in range(20):
        log.append(second(T0 + i))
    assert replaced == [] and len(path.read_text().splitlines()) == 20
    log.append(second(T0 + 20))  # the 21st line: over the bound
    assert len(replaced) == 1 and replaced[0][1] == "stall.jsonl"
    assert [s.t for s in read_recent(path, 1000, now=T0 + 20)] == [T0 + i
                                                                  for i in range(11, 21)]
    assert log.lines == 10
    assert sorted(p.name for p in tmp_path.iterdir()) == ["stall.jsonl"]  # no temp left
    for i in range(21, 31):
        log.append(second(T0 + i))
    assert len(replaced) == 1 and log.lines == 20
    log.append(second(T0 + 31))
    assert len(replaced) == 2
    assert len(path.read_text().splitlines()) == 10


def test_the_default_bound_is_two_hours_trimmed_to_one():
    assert (store.MAX_LINES, store.KEEP_LINES) == (7200, 3600)
    assert str(store.DEFAULT_PATH) == "/run/keel/stall.jsonl"


def test_an_existing_log_is_counted_so_the_bound_holds_across_restarts(tmp_path):
    path = tmp_path / "stall.jsonl"
    path.write_text("".join(json.dumps(second(T0 + i).as_dict()) + "\n" for i in range(15)))
    log = StallLog(path, max_lines=16, keep_lines=4)
    assert log.lines == 15
    log.append(second(T0 + 15))
    assert log.lines == 16
    log.append(second(T0 + 16))
    assert log.lines == 4 and len(path.read_text().splitlines()) == 4


def test_keep_must_fit_in_the_bound(tmp_path):
    with pytest.raises(ValueError):
        StallLog(tmp_path / "x.jsonl", max_lines=10, keep_lines=11)


def test_read_recent_reads_the_tail_only(tmp_path, monkeypatch):
    """A huge log (here a 256 MiB sparse hole before the records) is not read whole:
    reading stops at the first record older than the window."""
    path = tmp_path / "stall.jsonl"
    with path.open("wb") as f:
        f.truncate(256 * 1024**2)
        f.seek(0, 2)
        f.write(b"\n" + json.dumps(second(T0 - 1000).as_dict()).encode() + b"\n")
        for i in range(100):
            f.write(json.dumps(second(T0 + i).as_dict()).encode() + b"\n")
    read = 0
    real_open = Path.open

    class Counting:
        def __init__(self, f):
            self.f = f

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.f.close()

        def seek(self, *args):
            return self.f.seek(*args)

        def read(self, n=-1):
            nonlocal read
            data = self.f.read(n)
            read += len(data)
            return data

    monkeypatch.setattr(Path, "open", lambda self, *a, **k: Counting(real_open(self, *a, **k)))
    started = time.monotonic()
    recent = read_recent(path, 60, now=T0 + 99)
    assert [s.t for s in recent] == [T0 + i for i in range(40, 100)]
    assert read <= 2 * store.BLOCK
    assert time.monotonic() - started < 1.0
