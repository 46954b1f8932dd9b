"""iputils `ping -D -O -n` lines: one sample per reply or per missing reply."""

from __future__ import annotations

import re
from dataclasses import dataclass

_REPLY = re.compile(r"^\[(?P<ts>\d+\.\d+)\] \d+ bytes from [^:]+: icmp_seq=(?P<seq>\d+)"
                    r".*? time=(?P<rtt>[\d.]+) ms")
_MISSING = re.compile(r"^\[(?P<ts>\d+\.\d+)\] (?:no answer yet for icmp_seq=(?P<seq>\d+)"
                      r"|From \S+ icmp_seq=(?P<eseq>\d+) )")


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


def parse_ping(text: str) -> list[PingSample]:
    samples = (parse_ping_line(line) for line in text.splitlines())
    return [s for s in samples if s is not None]


def final_samples(samples: list[PingSample]) -> list[PingSample]:
    """One sample per sequence number, in order: a late reply replaces the
    "no answer yet" printed for it before."""
    by_seq: dict[int, PingSample] = {}
    for sample in samples:
        known = by_seq.get(sample.seq)
        if known is None or (known.lost and not sample.lost):
            by_seq[sample.seq] = sample
    return [by_seq[seq] for seq in sorted(by_seq)]
