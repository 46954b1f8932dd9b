"""`ping -6` output (captured from this host's iputils in network namespaces:
tests/fixtures/capture_ping6.py) through the one ping rule: replies from an
IPv6 address are replies (the colons in the source address once matched no
reply, and every IPv6 probe counted lost), unreachable and silent probes
are lost. Any line parses to a sample or to None, never an error."""

from __future__ import annotations

import ipaddress
import itertools
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from keel.parse.ping import PingSample, PingTracker, parse_ping, parse_ping_line, track

NETNS = Path(__file__).resolve().parents[2] / "fixtures" / "netns"


def capture(name: str) -> str:
    return (NETNS / name).read_text()


def test_replies_from_ipv6_addresses():
    for name, seqs in (("ping6-loopback.txt", [1, 2, 3, 4, 5]),
                       ("ping6-reply.txt", [1, 2, 3, 4, 5])):
        samples = parse_ping(capture(name))
        assert [s.seq for s in samples] == seqs, name
        assert all(s.rtt_ms is not None and 0 < s.rtt_ms < 1 for s in samples), name
    first = parse_ping(capture("ping6-loopback.txt"))[0]
    assert first == PingSample(1795537483.141511, 1, 0.029)  # its first line


def test_ipv6_replies_tracked_to_their_send_times():
    got = track(capture("ping6-reply.txt"), 0.2)
    assert len(got) == 5 and all(s.rtt_ms is not None for s in got)
    assert all(0.19 < b.sent - a.sent < 0.22 for a, b in itertools.pairwise(got))


def test_an_unreachable_neighbour_is_lost_once_a_probe():
    """No neighbour answers: "no answer yet" while NDP tries, then the
    kernel's "Address unreachable" for each probe, each lost once."""
    got = track(capture("ping6-unreachable.txt"), 0.2)
    assert len(got) == 12 and all(s.rtt_ms is None for s in got)


def test_no_route_from_a_router_is_a_loss():
    got = track(capture("ping6-noroute.txt"), 0.2)
    assert len(got) == 3 and all(s.rtt_ms is None for s in got)


def test_a_silent_ipv6_target_expires():
    tracker = PingTracker(0.2, loss_after=1.0)
    got = [s for line in capture("ping6-silent.txt").splitlines() for s in tracker.feed(line)]
    assert got and all(s.rtt_ms is None for s in got)
    assert len(got) + len(tracker.expire(1e10)) == 9  # probes 1-9 had no answer


def reply(ts: str, addr: str, seq: int, ttl: int, rtt: str) -> str:
    """A reply as iputils prints it with -D -n (IPv4 and IPv6 alike)."""
    return f"[{ts}] 64 bytes from {addr}: icmp_seq={seq} ttl={ttl} time={rtt} ms"


TIMES = st.builds(lambda s, us: f"{s}.{us:06d}", st.integers(0, 10**11), st.integers(0, 999999))
RTTS = st.one_of(st.integers(0, 10**6).map(str),
                 st.builds(lambda a, b: f"{a}.{b:03d}", st.integers(0, 10**5),
                           st.integers(0, 999)))


@given(st.ip_addresses(), TIMES, st.integers(0, 65535), st.integers(1, 255), RTTS)
def test_any_reply_parses(addr: ipaddress.IPv4Address | ipaddress.IPv6Address, ts: str,
                          seq: int, ttl: int, rtt: str):
    got = parse_ping_line(reply(ts, str(addr), seq, ttl, rtt))
    assert got == PingSample(float(ts), seq, float(rtt))


@given(st.ip_addresses(), TIMES, st.integers(0, 65535))
def test_any_unreachable_is_a_loss(addr, ts: str, seq: int):
    line = f"[{ts}] From {addr} icmp_seq={seq} Destination unreachable: Address unreachable"
    assert parse_ping_line(line) == PingSample(float(ts), seq, None)


@given(st.text(max_size=200))
def test_any_line_parses_or_is_none(line: str):
    got = parse_ping_line(line)
    assert got is None or isinstance(got, PingSample)


@given(st.lists(st.one_of(
    st.text(alphabet="[]0123456789.: abcdefimnoqrstuwyFR=", max_size=80),
    st.builds(reply, TIMES, st.ip_addresses().map(str), st.integers(0, 10**12),
              st.integers(0, 300), st.text(alphabet="0123456789.", min_size=1, max_size=30))),
    max_size=30))
def test_the_tracker_takes_any_lines(lines: list[str]):
    """Near-misses and out-of-range numbers too: samples, never an error."""
    tracker = PingTracker(0.2, loss_after=1.0)
    for line in lines:
        for sample in tracker.feed(line):
            assert sample.rtt_ms is None or sample.rtt_ms >= 0
