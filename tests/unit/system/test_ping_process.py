"""The one ping process type, run for real with a stand-in `ping` that prints
what iputils prints (a reply late, one never answered)."""

from __future__ import annotations

import sys
import textwrap
import time

from keel.system.ping import PingProcess

SCRIPT = textwrap.dedent("""
    import sys, time
    t0 = time.time()
    print("PING 10.99.0.2 (10.99.0.2) 56(84) bytes of data.", flush=True)
    def at(dt, text):
        time.sleep(max(0.0, t0 + dt - time.time()))
        print(f"[{time.time():.6f}] {text}", flush=True)
    at(0.05, "64 bytes from 10.99.0.2: icmp_seq=1 ttl=64 time=5.0 ms")
    at(0.20, "no answer yet for icmp_seq=2")
    at(0.40, "no answer yet for icmp_seq=3")
    at(0.45, "64 bytes from 10.99.0.2: icmp_seq=2 ttl=64 time=250 ms")
    for i in range(4, 12):
        at(0.2 * (i - 1), f"no answer yet for icmp_seq={i}")
    time.sleep(30)
""")


def test_a_late_reply_is_a_reply_and_a_silent_probe_is_lost(tmp_path):
    script = tmp_path / "ping.py"
    script.write_text(SCRIPT)
    seen = []
    probe = PingProcess("10.99.0.2", 0.2, loss_after=1.0, on_sample=seen.append,
                        argv=[sys.executable, str(script)])
    probe.start()
    try:
        start = time.time()
        probe.settle(start + 0.5)  # probes 1, 2 and 3 (lost after 1 s) are final
        got = probe.drain(time.time())
    finally:
        probe.stop()
    rtts = [s.rtt_ms for s in got]
    assert rtts[0] == 5.0 and 250.0 in rtts and None in rtts  # probe 3: lost
    assert [s.sent for s in got] == sorted(s.sent for s in got)
    assert set(seen) >= set(got) - {s for s in got if s.rtt_ms is None}  # the same samples
    assert probe.between(0, time.time())[0].rtt_ms == 5.0


def test_a_restart_is_a_new_process_with_a_new_tracker(tmp_path):
    script = tmp_path / "ping.py"
    script.write_text(SCRIPT)
    probe = PingProcess("10.99.0.2", 0.2, argv=[sys.executable, str(script)])
    for _ in range(2):  # the second run's icmp_seq=1 is not taken for the first's
        probe.start()
        deadline = time.time() + 5
        while time.time() < deadline and not any(s.rtt_ms == 250.0
                                                 for s in probe.drain(time.time())):
            time.sleep(0.05)
        probe.stop()
    assert sum(s.rtt_ms == 5.0 for s in probe.samples) == 2
