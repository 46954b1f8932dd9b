"""The UI's self-test runner: `keel selftest KIND --events` in a child process,
its JSON Lines read back into typed events; closing the run stops the child.

The fixture tests/fixtures/selftest/bufferbloat.events.jsonl is what the real
command line wrote (python -m tests.fixtures.selftest.capture_events)."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

from keel.selftest.events import Failed, Progress, Sample, loads
from keel.selftest.results import BufferbloatResult
from keel.ui.selftest import outcome
from keel.ui.selftest_latency import SelfTestLatency
from keel.ui.selftest_runner import KeelSelfTestRunner

EVENTS = Path(__file__).resolve().parents[2] / "fixtures" / "selftest" / "bufferbloat.events.jsonl"


def fake_keel(tmp_path, body: str) -> tuple[str, ...]:
    script = tmp_path / "fake_keel.py"
    script.write_text(textwrap.dedent(body))
    return (sys.executable, str(script))


def replaying(tmp_path) -> tuple[str, ...]:
    return fake_keel(tmp_path, f"""
        for line in open({str(EVENTS)!r}):
            print(line, end="", flush=True)
        """)


def test_the_runner_asks_for_events():
    runner = KeelSelfTestRunner(("keel",))
    assert runner.argv("bufferbloat", {"compare": True}) == [
        "keel", "selftest", "bufferbloat", "--events", "--compare"]
    assert runner.argv("mtu", {}) == ["keel", "selftest", "mtu", "--events"]


def test_events_of_a_real_run_come_back_typed(tmp_path):
    events = list(KeelSelfTestRunner(replaying(tmp_path)).start("bufferbloat", {}))
    assert events == [loads(line) for line in EVENTS.read_text().splitlines()]
    first = events[0]
    assert first == Progress("bufferbloat", "idle", 0.0, "waiting for 10.99.0.2")  # no guessing
    progress = [e for e in events if isinstance(e, Progress)]
    assert {e.phase for e in progress} == {"idle", "download", "upload", "bidirectional", "done"}
    assert all(0.0 <= e.fraction <= 1.0 for e in progress)
    samples = [e for e in events if isinstance(e, Sample)]
    assert {(s.target, s.address) for s in samples} == {("tunnel", "10.99.0.2"),
                                                        ("outside", "192.0.2.2")}
    result = events[-1]
    assert isinstance(result, BufferbloatResult) and not result.cake_bypassed
    shown = outcome("bufferbloat", [result])
    assert shown.ok and shown.grade == result.grade
    assert shown.summary[1].startswith("download      p50 ")
    assert shown.summary[-1].startswith(f"increase +{result.increase_ms:.1f} ms  RPM ")


def test_the_plot_shows_the_tests_own_final_samples():
    latency = SelfTestLatency()
    for line in EVENTS.read_text().splitlines():
        event = loads(line)
        if isinstance(event, Sample):
            latency.add(event)
    snap = latency.snapshot()
    assert snap is not None and [s.name for s in snap.series] == ["tunnel", "outside"]
    tunnel = snap.get("tunnel")
    assert tunnel is not None and tunnel.target == "10.99.0.2"
    # the self-test decided each probe's fate: a late reply is a reply, once
    assert all(s.rtt_ms is not None for s in tunnel.new)
    assert 412.5 in {s.rtt_ms for s in tunnel.new}
    sent = [s.sent for s in tunnel.new]
    assert len(sent) == len(set(sent)) and sent == sorted(sent)
    assert tunnel.idle_ms is not None and 4.0 < tunnel.idle_ms < 6.0
    assert latency.snapshot().get("tunnel").new == ()  # only what is new


def test_a_failing_test_says_why_in_one_line(tmp_path):
    argv0 = fake_keel(tmp_path, """
        import sys
        line = "keel selftest bufferbloat: no reply from 10.77.0.1"
        print(line, file=sys.stderr)
        print('{"type":"failed","test":"bufferbloat","error":"%s"}' % line, flush=True)
        sys.exit(1)
        """)
    (result,) = list(KeelSelfTestRunner(argv0).start("bufferbloat", {}))
    assert result == Failed("bufferbloat", "keel selftest bufferbloat: no reply from 10.77.0.1")


def test_a_crash_without_an_event_is_its_last_stderr_line(tmp_path):
    argv0 = fake_keel(tmp_path, """
        import sys
        print("Traceback ...\\nImportError: no module named iperf3", file=sys.stderr)
        sys.exit(1)
        """)
    (result,) = list(KeelSelfTestRunner(argv0).start("mtu", {}))
    assert result == Failed("mtu", "ImportError: no module named iperf3")


def test_closing_the_run_stops_the_child(tmp_path):
    marker = tmp_path / "stopped"
    argv0 = fake_keel(tmp_path, f"""
        import signal, sys, time
        def stop(*_):
            open({str(marker)!r}, "w").write("yes")
            sys.exit(130)
        signal.signal(signal.SIGTERM, stop)
        print('{{"type":"progress","test":"bufferbloat","phase":"idle","fraction":0.05,'
              '"text":"idle: 9 s left"}}', flush=True)
        time.sleep(30)
        """)
    run = KeelSelfTestRunner(argv0).start("bufferbloat", {})
    assert next(run) == Progress("bufferbloat", "idle", 0.05, "idle: 9 s left")
    run.close()
    assert marker.read_text() == "yes"
