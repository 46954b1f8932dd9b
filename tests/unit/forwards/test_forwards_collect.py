"""The forwards' snapshot (keel.forwards.collect) and what it reads
(keel.forwards.probe): the named counters through a Source, on nft's real
output (tests/fixtures/netns/), and a target's answer to a TCP connect, on
real sockets of this host's loopback."""

from __future__ import annotations

import dataclasses
import socket
import threading
import time
from pathlib import Path

import pytest

from keel.forwards import collect, probe
from keel.forwards.collect import ForwardRow, ForwardsSnapshot
from keel.model import Forward, RouterModel, Wan
from keel.render.nft import LIST_COUNTERS
from keel.system.source import FixtureSource, SourceError
from tests.unit.forwards.forwards_configs import DNS, EDGE, HUB

NETNS = Path(__file__).resolve().parents[2] / "fixtures" / "netns"
HIT = (NETNS / "nft-list-counters.json").read_text()  # fwd-web 3, fwd-game 2


class FailingSource(FixtureSource):
    """nft failing as RealSource reports it (the captured stderr)."""

    def run(self, argv):
        stderr = (NETNS / "nft-list-counters-no-table.txt").read_text().split("\n", 1)[1]
        raise SourceError(f"{' '.join(argv)}: {stderr.strip()}")


def test_the_counters_as_a_real_nft_lists_them():
    assert probe.read_counters(FixtureSource(commands={LIST_COUNTERS: HIT})) == (
        {"fwd-web": (3, 180), "fwd-game": (2, 58)}, "")


def test_no_table_keel_or_a_bad_listing_is_no_counters_and_why():
    counters, why = probe.read_counters(FailingSource())
    assert counters is None
    assert why == ("cannot list them (nft -j list counters table inet keel: Error: No such "
                   "file or directory)")
    counters, why = probe.read_counters(FixtureSource(commands={LIST_COUNTERS: "\x1b[2J"}))
    assert counters is None and why.startswith("nft listed what keel cannot read: not JSON")


def _listening() -> socket.socket:
    """A port that answers (the kernel completes the handshake into the backlog)."""
    return socket.create_server(("127.0.0.1", 0))


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # nothing listens once it is closed


def test_a_real_target_answers_or_refuses():
    with _listening() as server:
        assert probe.tcp_status("127.0.0.1", server.getsockname()[1]) == probe.ANSWERS
    assert probe.tcp_status("127.0.0.1", _closed_port()) == probe.REFUSED


@pytest.mark.parametrize("error", [TimeoutError("timed out"), OSError(113, "No route to host"),
                                   OSError(101, "Network is unreachable")])
def test_no_answer_in_time_or_no_route_is_no_answer(error):
    def connect(address, timeout):
        assert address == ("192.168.77.50", 80) and timeout == probe.CONNECT_TIMEOUT_S
        raise error

    assert probe.tcp_status("192.168.77.50", 80, connect=connect) == probe.NO_ANSWER


def test_the_snapshot_of_a_hub_s_forwards():
    checked: list[tuple[str, int]] = []
    lock = threading.Lock()

    def check(address: str, port: int) -> str:
        with lock:
            checked.append((address, port))
        return probe.ANSWERS if port == 80 else probe.REFUSED

    snap = collect.collect(HUB, read=lambda: ({"fwd-web": (3, 180)}, ""), check=check,
                           clock=lambda: 1234.0)
    assert snap == ForwardsSnapshot((
        ForwardRow("web", "tcp", "8080", "192.168.77.50:80", "edge1", "outer", 3, "answers"),
        # a range: checked on its first port; not in the listing: no hits
        ForwardRow("game", "both", "27015-27020", "192.168.77.60", "edge1", "outer", None,
                   "refused"),
        ForwardRow("dns", "udp", "5353", "192.168.77.53:53", "edge1", "outer", None,
                   "not checked"),
    ), hub=True, counters_note="", problem="", taken_at=1234.0)
    assert sorted(checked) == [("192.168.77.50", 80), ("192.168.77.60", 27015)]  # no udp
    with pytest.raises(dataclasses.FrozenInstanceError):
        snap.rows[0].hits = 4  # type: ignore[misc]
    assert snap.shown


def test_counters_nft_cannot_list_are_no_hits_and_said_once():
    snap = collect.collect(HUB, read=lambda: (None, "cannot list them (nft: not found)"),
                           check=lambda a, p: probe.NO_ANSWER)
    assert [r.hits for r in snap.rows] == [None, None, None]
    assert snap.counters_note == "cannot list them (nft: not found)"


def test_an_edge_is_no_hub_and_shows_its_inner_forwards():
    snap = collect.collect(EDGE, read=lambda: ({"fwd-web": (0, 0)}, ""),
                           check=lambda a, p: probe.ANSWERS)
    assert not snap.hub and snap.shown
    assert [(r.role, r.hits, r.status) for r in snap.rows] == [("inner", 0, "answers")]


def test_no_forwards_reads_nothing_and_shows_nothing_but_on_a_hub():
    def never():
        raise AssertionError("read without a forward")

    plain = collect.collect(RouterModel(wans=(Wan("eth0"),)), read=never, check=never)
    assert plain.rows == () and not plain.hub and not plain.shown
    hub = collect.collect(dataclasses.replace(HUB, forwards=()), read=never, check=never)
    assert hub.rows == () and hub.hub and hub.shown


def test_the_targets_are_checked_side_by_side():
    """Ten targets that never answer take one timeout, not ten."""
    many = tuple(Forward(f"f{i}", "tcp", 8000 + i, 8000 + i, "192.168.77.50", None, "outer",
                         via="edge1") for i in range(collect.MAX_PARALLEL))

    def slow(address: str, port: int) -> str:
        time.sleep(0.3)
        return probe.NO_ANSWER

    began = time.monotonic()
    snap = collect.collect(dataclasses.replace(HUB, forwards=many), read=lambda: ({}, ""),
                           check=slow)
    assert time.monotonic() - began < 0.3 * 3
    assert [r.status for r in snap.rows] == ["no answer"] * len(many)


def test_real_targets_on_loopback_through_the_real_check():
    with _listening() as server:
        model = RouterModel(wans=(Wan("eth0"),), forwards=(
            Forward("up", "tcp", 80, 80, "127.0.0.1", server.getsockname()[1], "local"),
            Forward("down", "both", 81, 81, "127.0.0.1", _closed_port(), "local"),
            dataclasses.replace(DNS, role="local")))
        snap = collect.collect(model, read=lambda: (probe.read_counters(
            FixtureSource(commands={LIST_COUNTERS: HIT}))))
    assert [r.status for r in snap.rows] == ["answers", "refused", "not checked"]
    assert all(r.hits is None for r in snap.rows)  # no fwd-up, fwd-down, fwd-dns counted
