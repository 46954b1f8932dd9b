"""The one ping rule (keel.parse.ping.PingTracker) on captured `ping -D -O -n`
output: a probe's time is when it left, a late reply is a reply until the loss
timeout, an unreachable probe is lost at once."""

from __future__ import annotations

from keel.parse.ping import LOSS_AFTER_S, PingTracker, track
from tests.fixtures.sources import lab


def test_late_replies_are_not_losses():
    tracker = PingTracker(0.2)
    samples = [s for line in lab("ping-idle.txt").splitlines() for s in tracker.feed(line)]
    # the first probes waited 3.3 s for the tunnel's handshake, under LOSS_AFTER_S
    assert [s.rtt_ms for s in samples][:3] == [3314.0, 3109.0, 2906.0]
    assert all(s.rtt_ms is not None for s in samples) and len(samples) == 10
    assert [s.sent for s in samples] == sorted(s.sent for s in samples)
    assert tracker.expire(1795343600.0) == []


def test_a_reply_after_the_timeout_is_a_loss_once():
    tracker = PingTracker(0.2, loss_after=3.0)
    samples = [s for line in lab("ping-idle.txt").splitlines() for s in tracker.feed(line)]
    # 3314 and 3109 ms: lost, and not counted again when the replies come
    assert [s.rtt_ms for s in samples[:3]] == [None, None, 2906.0]
    assert len(samples) == 10


def test_unreachable_and_timeouts():
    tracker = PingTracker(0.2, loss_after=3.0)
    lost = [s for line in lab("ping-unreachable.txt").splitlines() for s in tracker.feed(line)]
    assert len(lost) == 3 and all(s.rtt_ms is None for s in lost)
    assert tracker.feed("[100.0] no answer yet for icmp_seq=7") == []
    assert tracker.expire(101.0) == []
    (gone,) = tracker.expire(104.0)
    assert gone.rtt_ms is None and gone.sent == 99.8


def test_a_silent_target_expires_on_the_lines_own_clock():
    tracker = PingTracker(0.2, loss_after=1.0)
    out = []
    for i in range(1, 12):
        out += tracker.feed(f"[{100 + i * 0.2:.1f}] no answer yet for icmp_seq={i}")
    assert len(out) == 6 and all(s.rtt_ms is None for s in out)  # those 1 s overdue
    assert tracker.pending_before(102.0)


def test_a_capture_tracked_whole():
    loaded = track(lab("ping-loaded.txt"), 0.2)
    assert loaded and all(s.rtt_ms is None or s.rtt_ms > 0 for s in loaded)
    assert LOSS_AFTER_S >= 3.0
