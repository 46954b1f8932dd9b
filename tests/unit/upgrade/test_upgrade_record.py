"""The upgrade records on /data (the trial in progress, the last outcome):
written and read back whole; a damaged file reads as no record, never as an
exception (the gate reads them at every boot)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from keel.upgrade.record import LAST, PENDING, Outcome, Pending, Records

HUB = ("hQ2m1X0Z+hubpublickey000000000000000000000000=", "hub")
SITE = ("sT4b0Y9W+sitepublickey00000000000000000000000=", "site-b")
TRIAL = Pending("A", "B", "0.1.0+g7bb69c5", "0.4.0", (HUB, SITE), at=1764000000.5)
GOOD_PENDING: dict[str, Any] = {"from_slot": "A", "to_slot": "B", "from_version": "0.1.0",
                                "to_version": "0.4.0", "peers": [list(HUB)], "at": 1000.0}
GOOD_LAST: dict[str, Any] = {"result": "kept", "slot": "B", "version": "0.4.0",
                             "reason": "", "at": 1000.0}


@pytest.fixture
def records(tmp_path: Path) -> Records:
    return Records(tmp_path / "keel" / "upgrade")  # made by the first write


# --- round trips --------------------------------------------------------------------
def test_nothing_recorded(records: Records) -> None:
    assert records.pending() is None
    assert records.last() is None
    records.clear_pending()  # nothing to clear: no error


def test_pending_round_trip(records: Records) -> None:
    records.set_pending(TRIAL)
    assert records.pending() == TRIAL
    assert json.loads((records.dir / PENDING).read_text())["peers"] == [list(HUB), list(SITE)]
    records.clear_pending()
    assert records.pending() is None
    assert not (records.dir / PENDING).exists()


def test_pending_without_peers(records: Records) -> None:
    records.set_pending(Pending("B", "A", "0.4.0", "0.5.0", ()))
    pending = records.pending()
    assert pending is not None and pending.peers == () and pending.at > 0


@pytest.mark.parametrize("outcome", [
    Outcome("kept", "B", "0.4.0", at=1.5),
    Outcome("rolled back", "A", "0.4.0", "no handshake with hub in 180 s", at=2.0),
    Outcome("rollback", "A", "0.1.0", at=3.0),
])
def test_last_round_trip(records: Records, outcome: Outcome) -> None:
    records.set_last(outcome)
    assert records.last() == outcome
    assert (records.dir / LAST).read_text().endswith("\n")


def test_a_new_outcome_replaces_the_last(records: Records) -> None:
    records.set_last(Outcome("kept", "B", "0.4.0", at=1.0))
    records.set_last(Outcome("rollback", "A", "0.1.0", at=2.0))
    assert records.last() == Outcome("rollback", "A", "0.1.0", at=2.0)
    assert sorted(p.name for p in records.dir.iterdir()) == [LAST]  # no temporary left


def test_older_records_without_at_or_reason(records: Records) -> None:
    records.dir.mkdir(parents=True)
    (records.dir / LAST).write_text('{"result": "kept", "slot": "B", "version": "0.4.0"}')
    assert records.last() == Outcome("kept", "B", "0.4.0", "", 0.0)
    pending = {k: v for k, v in GOOD_PENDING.items() if k not in ("peers", "at")}
    (records.dir / PENDING).write_text(json.dumps(pending))
    assert records.pending() == Pending("A", "B", "0.1.0", "0.4.0", (), 0.0)


# --- damaged files ------------------------------------------------------------------
def _pending(**changes: Any) -> str:
    return json.dumps({**GOOD_PENDING, **changes})


DAMAGED_PENDING = [
    ("empty", ""),
    ("not JSON", "{from_slot: A"),
    ("cut short", _pending()[:40]),
    ("not UTF-8", b'{"from_slot": "\xff"}'),
    ("a list", "[]"),
    ("null", "null"),
    ("a number", "7"),
    ("no to_slot", json.dumps({k: v for k, v in GOOD_PENDING.items() if k != "to_slot"})),
    ("to_slot a number", _pending(to_slot=2)),
    ("to_slot null", _pending(to_slot=None)),
    ("version too long", _pending(to_version="9" * 201)),
    ("peers a dict", _pending(peers={"k": "hub"})),
    ("peers too many", _pending(peers=[list(HUB)] * 257)),
    ("a peer a number", _pending(peers=[7])),
    ("a peer a dict", _pending(peers=[{"key": "k"}])),
    ("a peer without its name", _pending(peers=[["k"]])),
    ("a peer empty", _pending(peers=[[]])),
    ("a peer of three", _pending(peers=[["k", "hub", "x"]])),
    ("a peer a string", _pending(peers=["kh"])),
    ("a peer's name a number", _pending(peers=[["k", 7]])),
    ("at a string", _pending(at="yesterday")),
    ("at a list", _pending(at=[1])),
    ("at a huge integer", _pending()[:-1] + ', "at": 1' + "0" * 400 + "}"),
    ("deep nesting", "[" * 100_000 + "]" * 100_000),
]


@pytest.mark.parametrize(("case", "text"), DAMAGED_PENDING, ids=[d[0] for d in DAMAGED_PENDING])
def test_damaged_pending_reads_as_none(records: Records, case: str, text: str | bytes) -> None:
    records.dir.mkdir(parents=True)
    (records.dir / PENDING).write_bytes(text if isinstance(text, bytes) else text.encode())
    assert records.pending() is None, case


def _last(**changes: Any) -> str:
    return json.dumps({**GOOD_LAST, **changes})


DAMAGED_LAST = [
    ("empty", ""),
    ("not JSON", "kept"),
    ("a list", '["kept", "B", "0.4.0"]'),
    ("no result", json.dumps({k: v for k, v in GOOD_LAST.items() if k != "result"})),
    ("result a number", _last(result=1)),
    ("reason null", _last(reason=None)),
    ("reason too long", _last(reason="x" * 201)),
    ("at a dict", _last(at={})),
    ("at a huge integer", _last()[:-1] + ', "at": 1' + "0" * 400 + "}"),
]


@pytest.mark.parametrize(("case", "text"), DAMAGED_LAST, ids=[d[0] for d in DAMAGED_LAST])
def test_damaged_last_reads_as_none(records: Records, case: str, text: str) -> None:
    records.dir.mkdir(parents=True)
    (records.dir / LAST).write_text(text)
    assert records.last() is None, case


def test_a_directory_in_the_way_reads_as_none(records: Records) -> None:
    (records.dir / PENDING).mkdir(parents=True)
    assert records.pending() is None


json_values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False),
              st.text(max_size=8), st.sampled_from(["A", "B", "kept", "rolled back"])),
    lambda inner: st.one_of(st.lists(inner, max_size=4),
                            st.dictionaries(st.text(max_size=4), inner, max_size=3)),
    max_leaves=6)


@st.composite
def mutated(draw: st.DrawFn, good: dict[str, Any]) -> dict[str, Any]:
    """A good record with a few fields dropped or given other values."""
    data = dict(good)
    for key in draw(st.lists(st.sampled_from(sorted(good)), max_size=3)):
        if draw(st.booleans()):
            data.pop(key, None)
        else:
            data[key] = draw(json_values)
    return data


@settings(max_examples=100, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(pending=mutated(GOOD_PENDING), last=mutated(GOOD_LAST))
def test_any_record_reads_or_is_none(records: Records, pending: dict[str, Any],
                                     last: dict[str, Any]) -> None:
    records.dir.mkdir(parents=True, exist_ok=True)
    (records.dir / PENDING).write_text(json.dumps(pending))
    (records.dir / LAST).write_text(json.dumps(last))
    read = records.pending()
    assert read is None or (isinstance(read, Pending)
                            and all(len(p) == 2 and all(isinstance(x, str) for x in p)
                                    for p in read.peers))
    outcome = records.last()
    assert outcome is None or isinstance(outcome.line(), str)


# --- the outcome in one line --------------------------------------------------------
@pytest.mark.parametrize(("outcome", "line"), [
    (Outcome("kept", "B", "0.4.0"), "upgrade to 0.4.0 kept (slot B)"),
    (Outcome("rolled back", "A", "0.4.0", "no handshake with hub in 180 s"),
     "upgrade to 0.4.0 rolled back: no handshake with hub in 180 s"),
    (Outcome("rolled back", "A", "0.4.0", "keel apply --boot could apply no config"),
     "upgrade to 0.4.0 rolled back: keel apply --boot could apply no config"),
    (Outcome("rollback", "A", "0.1.0+g7bb69c5"),
     "rolled back to 0.1.0+g7bb69c5 (slot A) on request"),
])
def test_outcome_line(outcome: Outcome, line: str) -> None:
    assert outcome.line() == line


# --- the install's tunnel wait (keel upgrade --tunnel-wait) ---------------------------
def test_a_record_without_a_tunnel_wait_has_the_default(records: Records) -> None:
    from keel.thresholds import UPGRADE_HANDSHAKE_WAIT_S

    records.dir.mkdir(parents=True)
    (records.dir / PENDING).write_text(json.dumps(GOOD_PENDING))
    pending = records.pending()
    assert pending is not None and pending.tunnel_wait == UPGRADE_HANDSHAKE_WAIT_S


def test_the_tunnel_wait_round_trips(records: Records) -> None:
    records.set_pending(Pending("A", "B", "1", "2", (HUB,), at=5.0, tunnel_wait=60))
    pending = records.pending()
    assert pending is not None and pending.tunnel_wait == 60


@pytest.mark.parametrize("wait", [29, 3601, -1, 0, 60.5, "60", True, None])
def test_a_tunnel_wait_out_of_range_or_not_whole_is_refused(wait: object) -> None:
    from keel.upgrade.record import check_tunnel_wait

    with pytest.raises(ValueError, match="whole seconds from 30 to 3600"):
        check_tunnel_wait(wait)


def test_a_damaged_tunnel_wait_reads_as_no_record(records: Records) -> None:
    records.dir.mkdir(parents=True)
    (records.dir / PENDING).write_text(json.dumps({**GOOD_PENDING, "tunnel_wait": "soon"}))
    assert records.pending() is None
