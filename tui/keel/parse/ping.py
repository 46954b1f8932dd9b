"""iputils `ping -D -O -n` lines (`ping -4` and `ping -6` alike): one sample
per reply or per missing reply."""

from __future__ import annotations

import re
from dataclasses import dataclass

# The reply's source is an IPv4 or an IPv6 address (colons in it: the last
# colon before the space ends it, "64 bytes from 2001:db8::2: icmp_seq=1").
# Numbers are bounded, so any line parses to a sample or to None, no error.
_TS = r"^\[(?P<ts>\d{1,12}\.\d{1,9})\] "
_SEQ = r"icmp_seq=(?P<seq>\d{1,9})"
_REPLY = re.compile(_TS + r"\d{1,6} bytes from \S+: " + _SEQ
                    + r" .*?time=(?P<rtt>\d{1,9}(?:\.\d{1,6})?) ms")
_MISSING = re.compile(_TS + r"(?:no answer yet for icmp_seq=(?P<seq>\d{1,9})"
                      r"|From \S+ icmp_seq=(?P<eseq>\d{1,9}) )")


@dataclass(frozen=True)
class PingSample:
    timestamp: float
    seq: int
    rtt_ms: float | None  # None = lost (no answer in time)

    @property
    def lost(self) -> bool:
        return self.rtt_ms is None


def parse_ping_line(line: str) -> PingSample | None:
    """A reply or a "no answer yet" line; None for anything else."""
    m = _REPLY.match(line)
    if m:
        return PingSample(float(m["ts"]), int(m["seq"]), float(m["rtt"]))
    m = _MISSING.match(line)
    if m:
        return PingSample(float(m["ts"]), int(m["seq"] or m["eseq"]), None)
    return None


@dataclass(frozen=True)
class LatencySample:
    """One probe's fate: when it left and its RTT, or None when it was lost."""

    sent: float  # epoch seconds the probe left
    rtt_ms: float | None  # None = lost


LOSS_AFTER_S = 5.0  # a reply later than this counts lost (the UI and the self-tests):
# a badly bloated link holds a few seconds of queue, and those probes are
# answered, late; the dashboard shows a probe lost 5 s after it left


class PingTracker:
    """The one rule turning one ping process's `-D -O -n` lines into final
    samples (pure; fed with lines): a probe's time is when it left (reply time
    minus RTT); it is lost when no reply came within `loss_after` seconds or
    the kernel reported it unreachable; a reply later than that is ignored.
    With -O, iputils prints "no answer yet" for every probe still outstanding
    when the next one leaves, so lines keep coming while the target is silent
    and each line's own timestamp expires the overdue probes."""

    def __init__(self, interval: float, loss_after: float = LOSS_AFTER_S) -> None:
        self.interval, self.loss_after = interval, loss_after
        self._pending: dict[int, float] = {}  # seq -> send time
        self._done: set[int] = set()
        self.seen_until = 0.0  # the timestamp of the latest line

    def feed(self, line: str) -> list[LatencySample]:
        sample = parse_ping_line(line)
        if sample is None:
            return []
        self.seen_until = max(self.seen_until, sample.timestamp)
        return [*self._settle(line, sample), *self.expire(sample.timestamp)]

    def _settle(self, line: str, sample: PingSample) -> list[LatencySample]:
        """This line's own probe first: its reply may come just before others expire."""
        if sample.seq in self._done:
            return []
        if sample.rtt_ms is not None:
            sent = sample.timestamp - sample.rtt_ms / 1000
            self._pending.pop(sample.seq, None)
            self._mark(sample.seq)
            lost = sample.rtt_ms / 1000 > self.loss_after
            return [LatencySample(sent, None if lost else sample.rtt_ms)]
        if "no answer yet" in line:
            # printed as the next probe leaves: this one left an interval ago
            self._pending.setdefault(sample.seq, sample.timestamp - self.interval)
            return []
        sent = self._pending.pop(sample.seq, sample.timestamp)  # "From ... Unreachable"
        self._mark(sample.seq)
        return [LatencySample(sent, None)]

    def expire(self, now: float) -> list[LatencySample]:
        lost = [(seq, sent) for seq, sent in self._pending.items()
                if now - sent > self.loss_after]
        for seq, _ in lost:
            del self._pending[seq]
            self._mark(seq)
        return [LatencySample(sent, None) for _, sent in sorted(lost, key=lambda x: x[1])]

    def pending_before(self, t: float) -> bool:
        """Whether a probe sent before `t` may still wait for its fate: one
        is pending, or no line has come from after `t` plus an interval (each
        probe's reply or "no answer yet" comes by the time the next leaves)."""
        return (self.seen_until < t + self.interval
                or any(sent < t for sent in self._pending.values()))

    def _mark(self, seq: int) -> None:
        self._done.add(seq)
        if len(self._done) > 4096:
            floor = max(self._done) - 2048
            self._done = {s for s in self._done if s > floor}


def parse_ping(text: str) -> list[PingSample]:
    samples = (parse_ping_line(line) for line in text.splitlines())
    return [s for s in samples if s is not None]


def track(text: str, interval: float, loss_after: float = LOSS_AFTER_S) -> list[LatencySample]:
    """The final samples of a captured ping output, by send time (probes
    whose fate the capture does not show are left out)."""
    tracker = PingTracker(interval, loss_after)
    out = [s for line in text.splitlines() for s in tracker.feed(line)]
    return sorted(out, key=lambda s: s.sent)
