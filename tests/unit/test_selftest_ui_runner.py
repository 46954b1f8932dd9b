"""The UI's self-test runner: progress lines and JSON of `keel selftest` in a
child process become UI events; closing the run stops the child."""

from __future__ import annotations

import json
import sys
import textwrap

from keel.selftest.ui_runner import KeelSelfTestRunner
from keel.ui.selftest import Progress, Result

RESULT = [{"phases": [
    {"name": "idle", "tunnel": {"p50_ms": 20.0, "p95_ms": 22.0}, "increase_p50_ms": None},
    {"name": "download", "tunnel": {"p50_ms": 23.0, "p95_ms": 26.0}, "increase_p50_ms": 3.0}],
    "increase_ms": 3.0, "rpm": 2600.0, "rpm_label": "High", "grade": "A+"}]


def fake_keel(tmp_path, body: str) -> tuple[str, ...]:
    script = tmp_path / "fake_keel.py"
    script.write_text(textwrap.dedent(body))
    return (sys.executable, str(script))


def test_progress_then_the_graded_result(tmp_path):
    argv0 = fake_keel(tmp_path, f"""
        import sys
        print("[ 10%] idle: 4 s left", file=sys.stderr, flush=True)
        print("[ 50%] download: 3 s left", file=sys.stderr, flush=True)
        print({json.dumps(json.dumps(RESULT))})
        """)
    events = list(KeelSelfTestRunner(argv0).start("bufferbloat", {}))
    assert events[0] == Progress(0.10, "idle", "4 s left")
    assert events[1].phase == "download"
    result = events[-1]
    assert isinstance(result, Result) and result.ok and result.grade == "A+"
    assert any("+3.0" in line for line in result.summary)


def test_a_failing_test_says_why_in_one_line(tmp_path):
    argv0 = fake_keel(tmp_path, """
        import sys
        print("keel selftest bufferbloat: no reply from 10.77.0.1", file=sys.stderr)
        sys.exit(1)
        """)
    (result,) = list(KeelSelfTestRunner(argv0).start("bufferbloat", {}))
    assert not result.ok and "no reply from 10.77.0.1" in result.error


def test_closing_the_run_stops_the_child(tmp_path):
    marker = tmp_path / "stopped"
    argv0 = fake_keel(tmp_path, f"""
        import signal, sys, time
        def stop(*_):
            open({str(marker)!r}, "w").write("yes")
            sys.exit(130)
        signal.signal(signal.SIGTERM, stop)
        print("[  5%] idle: 9 s left", file=sys.stderr, flush=True)
        time.sleep(30)
        """)
    run = KeelSelfTestRunner(argv0).start("bufferbloat", {})
    assert isinstance(next(run), Progress)
    run.close()
    assert marker.read_text() == "yes"
