"""Finding a port by its cable (keel.ui.cable_watch): which port's carrier
came up in a sequence of snapshots, and the watch's verdict, without an app."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from keel.ui import cable_watch as w
from tests.fixtures.ports import PORTS, linked

NAMES = ("eth0", "eth1", "eth2", "eth3")


def snaps(*states: dict[str, bool | None], step: float = 0.5) -> list[w.Snapshot]:
    return [w.Snapshot(i * step, s) for i, s in enumerate(states)]


def test_the_port_unplugged_then_plugged_in_is_the_one():
    seq = snaps({"eth0": True, "eth1": True, "eth2": False},
                {"eth0": False, "eth1": False, "eth2": False},
                {"eth0": False, "eth1": True, "eth2": False})
    assert w.came_up(seq) == ["eth1"]
    assert w.first_up_at(seq) == 1.0


def test_a_port_up_all_along_never_counts():
    seq = snaps({"eth0": True, "eth1": False}, {"eth0": True, "eth1": False},
                {"eth0": True, "eth1": False})
    assert w.came_up(seq) == [] and w.first_up_at(seq) is None


def test_a_port_down_or_absent_then_up_counts():
    """Down (carrier unreadable: None), or a USB NIC plugged in (absent)."""
    assert w.came_up(snaps({"eth0": True})) == []  # one snapshot: nothing seen change
    seq = snaps({"eth0": None}, {"eth0": None}, {"eth0": True, "usb0": True})
    assert w.came_up(seq) == ["eth0", "usb0"]


def test_a_port_that_came_up_and_went_down_again_is_not_up():
    seq = snaps({"eth0": False}, {"eth0": True}, {"eth0": False})
    assert w.came_up(seq) == []


def test_the_verdict_waits_to_settle_then_names_the_port():
    seq = snaps({"eth0": False, "eth1": False}, {"eth0": False, "eth1": True})
    verdict = w.judge(seq, 0.0, "WAN", timeout_s=60, settle_s=2)
    assert not verdict.done and verdict.message.startswith("link up on eth1")
    seq += [w.Snapshot(3.0, {"eth0": False, "eth1": True})]
    assert w.judge(seq, 0.0, "WAN", timeout_s=60, settle_s=2) == w.Verdict(
        True, "eth1", "the WAN cable is in eth1")


def test_two_cables_are_refused():
    seq = snaps({"eth0": False, "eth1": False}, {"eth0": True, "eth1": True},
                {"eth0": True, "eth1": True}, step=2)
    verdict = w.judge(seq, 0.0, "LAN", timeout_s=60, settle_s=2)
    assert verdict == w.Verdict(True, None, "links came up on eth0, eth1: plug in the LAN "
                                            "cable alone")


def test_nothing_by_the_timeout_is_said():
    seq = snaps({"eth0": False}, {"eth0": False}, step=30)
    assert w.judge(seq[:1], 0.0, "WAN", timeout_s=60).message == (
        "unplug all cables, then plug the WAN cable in now (60 s left)")
    verdict = w.judge([*seq, w.Snapshot(60, {"eth0": False})], 0.0, "WAN", timeout_s=60)
    assert verdict == w.Verdict(True, None, "no link came up in 60 s: is the cable in, the "
                                            "other end on?")


def test_a_snapshot_of_ports():
    found = w.snapshot(1.5, [PORTS[0], PORTS[1], linked(PORTS[2], False)])
    assert found.at == 1.5 and found.carrier == {"ens3": False, "ens4": True, "ens5": False}


# --- properties ------------------------------------------------------------------------

carriers = st.sampled_from([True, False, None])
states = st.dictionaries(st.sampled_from(NAMES), carriers, max_size=len(NAMES))
sequences = st.lists(states, max_size=12).map(lambda s: snaps(*s))


@settings(max_examples=500)
@given(sequences)
def test_a_port_that_came_up_is_up_now_and_was_seen_without_carrier(seq):
    for name in w.came_up(seq):
        assert seq[-1].carrier[name] is True
        assert any(s.carrier.get(name) is not True for s in seq[:-1])
    up_all_along = [n for n in NAMES if seq and all(s.carrier.get(n) is True for s in seq)]
    assert not set(up_all_along) & set(w.came_up(seq))


@settings(max_examples=500)
@given(sequences, st.floats(0, 10), st.floats(1, 30))
def test_the_verdict_names_a_port_only_when_it_alone_came_up(seq, settle_s, timeout_s):
    verdict = w.judge(seq, 0.0, "WAN", timeout_s=timeout_s, settle_s=settle_s)
    up = w.came_up(seq)
    if verdict.port is not None:
        assert verdict.done and up == [verdict.port]
    if verdict.done and verdict.port is None:
        assert len(up) != 1 or not seq
    now = seq[-1].at if seq else 0.0
    if now >= timeout_s:  # never watches past the timeout
        assert verdict.done
    if not up and now < timeout_s:
        assert not verdict.done


@settings(max_examples=300)
@given(st.lists(states, min_size=1, max_size=8), st.sampled_from(NAMES), st.data())
def test_one_cable_plugged_in_after_all_were_out_is_found(before, name, data):
    """Whatever came before: every cable out, then one in and left in; the
    others' links stay off (no carrier or down). Once settled, that port."""
    others = {n: data.draw(st.sampled_from([False, None])) for n in NAMES if n != name}
    out = {**others, name: False}
    plugged = {**others, name: True}
    seq = snaps(*before, out, plugged, plugged, plugged, plugged, plugged)
    verdict = w.judge(seq, 0.0, "LAN", timeout_s=60, settle_s=2)
    assert verdict == w.Verdict(True, name, f"the LAN cable is in {name}")


@settings(max_examples=300)
@given(sequences, states)
def test_more_snapshots_of_the_same_never_unfind_a_port(seq, last):
    """A port found stays found while its link stays up and nothing else changes."""
    seq = [*seq, w.Snapshot(len(seq) * 0.5, last)]
    first = w.came_up(seq)
    seq = [*seq, w.Snapshot(len(seq) * 0.5, last)]
    assert w.came_up(seq) == first
