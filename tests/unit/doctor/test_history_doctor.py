"""keel doctor's history and metrics checks: the history daemon running,
making a point every interval and keeping them in batches; the metrics
endpoint running exactly when [metrics] enables it. And the reader of the
daemon's files, on files as the daemon writes them."""

from __future__ import annotations

import json

import pytest

from keel.doctor import collect
from keel.doctor.checks import FAIL, INFO, OK, WARN
from keel.doctor.history import HistoryState, check_history, check_metrics
from keel.model import Lan, Metrics, RouterModel, Wan

NOW = 1_800_000_000.0
INTERVAL, BATCH = 10.0, 300.0
LAN = Lan("eth1", "192.168.77.1/24")


def history(**changed) -> HistoryState:
    healthy = {"running": True, "newest": NOW - 4, "kept_at": NOW - 120,
               "store_bytes": 3_100_000}
    return HistoryState(**(healthy | changed))


def test_a_daemon_that_makes_and_keeps_points_is_ok() -> None:
    check = check_history(history(), NOW, INTERVAL, BATCH)
    assert (check.status, check.detail) == (
        OK, "a point every 10 s, last kept 120 s ago; store 3.1 MB")
    assert check.data["store_bytes"] == 3_100_000


@pytest.mark.parametrize(("state", "said"), [
    (history(running=False), "not running"),
    (history(newest=None), "no point yet"),
    (history(newest=NOW - 31), "no point for 31 s"),
    (history(kept_at=NOW - 611), "none kept for 611 s"),
])
def test_a_daemon_stopped_or_stuck_is_a_warning_that_says_how(state, said) -> None:
    check = check_history(state, NOW, INTERVAL, BATCH)
    assert check.status == WARN and said in check.detail, check
    assert "/run/keel/history.log" in check.detail


def test_the_first_batch_not_kept_yet_is_no_warning() -> None:
    check = check_history(history(kept_at=None, store_bytes=None), NOW, INTERVAL, BATCH)
    assert (check.status, check.detail) == (OK, "a point every 10 s, none kept yet")


@pytest.mark.parametrize(("enabled", "running", "status"), [
    (False, False, INFO), (False, True, WARN), (True, False, FAIL), (True, True, OK)])
def test_the_endpoint_runs_exactly_when_enabled(enabled, running, status) -> None:
    model = RouterModel(wans=(Wan("eth0"),), lans=(LAN,), metrics=Metrics(enabled=enabled))
    check = check_metrics(model, running, ["192.168.77.1"])
    assert check.status == status, check
    if status == OK:
        assert check.detail == "on 192.168.77.1, port 9586"


def test_the_reader_takes_the_daemons_own_files(tmp_path, monkeypatch) -> None:
    """latest.json and written.json as keel.history.daemon writes them; the
    pidfile as S42history does; garbage in any reads as nothing."""
    from keel.history import daemon
    from keel.history.point import Point

    run = tmp_path / "history"
    latest = run / "latest.json"
    daemon.write_latest(latest, Point(t=int(NOW) - 10), [], NOW - 60)
    (run / "written.json").write_text(json.dumps({"newest": NOW - 70, "at": NOW - 60}) + "\n")
    pidfile = tmp_path / "history.pid"
    pidfile.write_text("1\n")  # init: a process that runs
    monkeypatch.setattr(daemon, "LATEST", latest)
    monkeypatch.setattr(collect, "HISTORY_PIDFILE", pidfile)
    state = collect.history()
    assert (state.running, state.newest, state.kept_at) == (True, NOW - 10, NOW - 60)
    latest.write_text("{not json")
    (run / "written.json").write_text('{"at": "soon"}')
    pidfile.write_text("nobody\n")
    assert collect.history() == HistoryState(running=False, store_bytes=state.store_bytes)
