"""The slots as `keel upgrade status` shows them: the installed versions from
RAUC's JSON status, the booted slot from the kernel command line, and one
snapshot of both slots' states (good, trying, new, bad, empty) with the one
GRUB boots next."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from keel.upgrade import grubenv, slots
from keel.upgrade.record import Outcome, Pending
from keel.upgrade.slots import StatusError
from tests.unit.upgrade.grubenv_blocks import (
    B_BAD,
    B_KEPT,
    B_TRIED_OUT,
    B_TRYING,
    BOTH_SPENT,
    FRESH,
    INSTALLED,
    by_hand,
)

VERSION = "0.1.0+g7bb69c5"


def rauc_status() -> dict[str, Any]:
    """`rauc status --detailed --output-format=json` (RAUC 1.13) after an
    install into slot B, booted from A as flashed (no bundle info for A)."""
    return {
        "compatible": "keel-x86_64", "variant": "", "booted": "A",
        "boot_primary": "rootfs.0",
        "slots": [
            {"rootfs.1": {
                "class": "rootfs", "device": "/dev/disk/by-partlabel/keel-root-b",
                "type": "raw", "bootname": "B", "state": "inactive", "parent": None,
                "mountpoint": None, "boot_status": "good",
                "slot_status": {
                    "bundle": {"compatible": "keel-x86_64", "version": VERSION,
                               "description": f"keel {VERSION}", "build": None,
                               "hash": "5f1c" * 16},
                    "checksum": {"sha256": "a9e3" * 16, "size": 124059648},
                    "installed": {"timestamp": "2026-11-24T03:00:00Z", "count": 1},
                    "activated": {"timestamp": "2026-11-24T03:00:01Z", "count": 1},
                    "status": "ok"}}},
            {"boot.1": {
                "class": "boot", "device": "/dev/disk/by-partlabel/keel-boot-b",
                "type": "vfat", "bootname": None, "state": "inactive",
                "parent": "rootfs.1", "mountpoint": None,
                "slot_status": {
                    "bundle": {"compatible": "keel-x86_64", "version": VERSION,
                               "description": f"keel {VERSION}", "build": None,
                               "hash": "5f1c" * 16},
                    "checksum": {"sha256": "77b0" * 16, "size": 16777216},
                    "status": "ok"}}},
            {"rootfs.0": {
                "class": "rootfs", "device": "/dev/disk/by-partlabel/keel-root-a",
                "type": "raw", "bootname": "A", "state": "booted", "parent": None,
                "mountpoint": "/", "boot_status": "good",
                "slot_status": {"status": "ok"}}},
            {"boot.0": {
                "class": "boot", "device": "/dev/disk/by-partlabel/keel-boot-a",
                "type": "vfat", "bootname": None, "state": "booted",
                "parent": "rootfs.0", "mountpoint": None,
                "slot_status": {"status": "ok"}}},
        ],
    }


def with_b(**changes: Any) -> str:
    """The status above with slot rootfs.1's fields changed."""
    data = rauc_status()
    data["slots"][0]["rootfs.1"].update(changes)
    return json.dumps(data)


def with_b_status(**changes: Any) -> str:
    data = rauc_status()
    data["slots"][0]["rootfs.1"]["slot_status"].update(changes)
    return json.dumps(data)


# --- parse_rauc_versions ---------------------------------------------------------
def test_installed_version_of_b_only() -> None:
    assert slots.parse_rauc_versions(json.dumps(rauc_status())) == {"B": VERSION}


def test_pretty_printed_status_reads_the_same() -> None:
    text = json.dumps(rauc_status(), indent=2)
    assert slots.parse_rauc_versions(text) == {"B": VERSION}


def test_both_slots_installed_by_rauc() -> None:
    data = rauc_status()
    data["slots"][2]["rootfs.0"]["slot_status"] = {
        "bundle": {"compatible": "keel-x86_64", "version": "0.4.0"}, "status": "ok"}
    assert slots.parse_rauc_versions(json.dumps(data)) == {"A": "0.4.0", "B": VERSION}


@pytest.mark.parametrize(("case", "text"), [
    ("install failed", with_b_status(status="failed")),
    ("no status", with_b(slot_status={"bundle": {"version": VERSION}})),
    ("slot_status null", with_b(slot_status=None)),
    ("slot_status a list", with_b(slot_status=[1, 2])),
    ("slot_status a string", with_b(slot_status="ok")),
    ("bundle null", with_b_status(bundle=None)),
    ("bundle a list", with_b_status(bundle=[VERSION])),
    ("version a number", with_b_status(bundle={"version": 4})),
    ("version null", with_b_status(bundle={"version": None})),
    ("no bootname", with_b(bootname=None)),
    ("bootname a number", with_b(bootname=2)),
])
def test_entries_without_a_usable_version_are_skipped(case: str, text: str) -> None:
    assert slots.parse_rauc_versions(text) == {}, case


@pytest.mark.parametrize(("case", "entry"), [
    ("two keys", {"rootfs.1": {}, "rootfs.2": {}}),
    ("no key", {}),
    ("a list", ["rootfs.1"]),
    ("a string", "rootfs.1"),
    ("null", None),
    ("info a list", {"rootfs.1": [1]}),
    ("info a string", {"rootfs.1": "B"}),
])
def test_odd_slot_entries_are_skipped(case: str, entry: Any) -> None:
    data = rauc_status()
    data["slots"].insert(0, entry)
    assert slots.parse_rauc_versions(json.dumps(data)) == {"B": VERSION}, case


def test_a_long_version_is_cut() -> None:
    assert slots.parse_rauc_versions(with_b_status(bundle={"version": "9" * 500})) == {
        "B": "9" * 64}


UNREADABLE = [
    ("empty", "", "rauc status is not JSON"),
    ("an error text", "rauc-Message: Failed to connect to D-Bus", "rauc status is not JSON"),
    ("cut short", json.dumps(rauc_status())[:300], "rauc status is not JSON"),
    ("too long", " " * (slots.MAX_JSON + 1), "rauc status printed too much"),
    ("a list", "[]", "rauc status has no slot list"),
    ("a string", '"A"', "rauc status has no slot list"),
    ("null", "null", "rauc status has no slot list"),
    ("no slots", json.dumps({"compatible": "keel-x86_64"}), "rauc status has no slot list"),
    ("slots a dict", json.dumps({"slots": {"rootfs.1": {}}}), "rauc status has no slot list"),
    ("slots null", json.dumps({"slots": None}), "rauc status has no slot list"),
    ("nested deep", "[" * 100_000 + "]" * 100_000, "rauc status"),
    ("nested deep in a slot", '{"slots": [' + "{\"a\": " * 50_000 + "1" + "}" * 50_000 + "]}",
     "rauc status"),
    ("a huge integer", '{"slots": [], "n": ' + "9" * 5000 + "}", "rauc status is not JSON"),
]


@pytest.mark.parametrize(("case", "text", "message"), UNREADABLE, ids=[u[0] for u in UNREADABLE])
def test_unreadable_status(case: str, text: str, message: str) -> None:
    with pytest.raises(StatusError) as err:
        slots.parse_rauc_versions(text)
    assert message in str(err.value), case


def _json_values() -> st.SearchStrategy[Any]:
    leaves = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False),
                       st.text(max_size=10), st.sampled_from(["A", "B", "ok", VERSION]))
    return st.recursive(
        leaves,
        lambda inner: st.one_of(
            st.lists(inner, max_size=4),
            st.dictionaries(st.sampled_from(["slots", "bootname", "slot_status", "bundle",
                                             "version", "status", "rootfs.0", "x"]),
                            inner, max_size=4)),
        max_leaves=10)


status_texts = st.one_of(
    st.text(max_size=300),
    _json_values().map(json.dumps),
    _json_values().map(lambda v: json.dumps({"slots": [v, {"rootfs.1": v}]})),
    st.integers(0, 3000).map(lambda n: "[" * n + "]" * n),
    st.integers(0, len(json.dumps(rauc_status()))).map(lambda n: json.dumps(rauc_status())[:n]),
)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(status_texts)
def test_any_text_gives_versions_or_status_error(text: str) -> None:
    try:
        versions = slots.parse_rauc_versions(text)
    except StatusError:
        return
    assert isinstance(versions, dict)
    assert all(isinstance(k, str) and isinstance(v, str) and len(v) <= 64
               for k, v in versions.items())


# --- booted_slot -----------------------------------------------------------------
CMDLINE_A = ("BOOT_IMAGE=(hd0,gpt3)/keel/bzImage root=PARTLABEL=keel-root-a rauc.slot=A "
             "rootfstype=squashfs ro console=tty1 console=ttyS0,115200 panic=5 quiet\n")
CMDLINE_B = ("BOOT_IMAGE=(hd0,gpt4)/keel/bzImage root=PARTLABEL=keel-root-b rauc.slot=B "
             "rootfstype=squashfs ro console=tty1 console=ttyS0,115200 panic=5 quiet\n")
CMDLINE_SPENT = CMDLINE_A.replace("rauc.slot=A", "rauc.slot=A keel.slots_spent=1")


@pytest.mark.parametrize(("cmdline", "slot"), [
    (CMDLINE_A, "A"),
    (CMDLINE_B, "B"),
    (CMDLINE_SPENT, "A"),
    ("rauc.slot=B", "B"),
    ("ro\trauc.slot=B\tquiet", "B"),
    ("rauc.slot=A rauc.slot=B", "A"),  # the first one, as RAUC reads it
    ("", None),
    ("\n", None),
    ("BOOT_IMAGE=/bzImage root=/dev/sda2 ro quiet", None),  # not a keel slot boot
    ("rauc.slot=", None),
    ("rauc.slot=C", None),
    ("rauc.slot=a", None),
    ("rauc.slot=AB", None),
    ("rauc.slot=A\x00", None),
    ("rauc.slot=A\x1b[2J", None),
    ("rauc.slot=\u0391", None),  # Greek capital alpha
    ("rauc.slot=C rauc.slot=A", None),
    ("xrauc.slot=A", None),
    ("rauc.slot.A", None),
    ("RAUC.SLOT=A", None),
    ("rauc.slot = A", None),
])
def test_booted_slot(cmdline: str, slot: str | None) -> None:
    assert slots.booted_slot(cmdline) == slot


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=300))
def test_booted_slot_of_any_text(cmdline: str) -> None:
    assert slots.booted_slot(cmdline) in (None, "A", "B")
    assert slots.booted_slot(cmdline + " rauc.slot=B") in (None, "A", "B")


# --- build -----------------------------------------------------------------------
def env(values: dict[str, str]) -> grubenv.BootEnv:
    return grubenv.parse(by_hand(values))


PENDING_B = Pending("A", "B", "0.1.0", "0.4.0", (("hubkey=", "hub"),), at=1000.0)


def states(st_: slots.UpgradeStatus) -> dict[str, tuple[str, str, bool, bool]]:
    return {s.name: (s.version, s.state, s.booted, s.next_boot) for s in st_.slots}


def test_fresh_image() -> None:
    status = slots.build("A", env(FRESH), {}, "0.1.0", None, None)
    assert states(status) == {"A": ("0.1.0", "good", True, True),
                              "B": ("", "empty", False, False)}
    assert status.other() is not None and status.other().name == "B"


def test_after_install_before_reboot() -> None:
    status = slots.build("A", env(INSTALLED), {"B": "0.4.0"}, "0.1.0", PENDING_B, None)
    assert states(status) == {"A": ("0.1.0", "good", True, False),
                              "B": ("0.4.0", "new", False, True)}


def test_trial_boot_of_b() -> None:
    status = slots.build("B", env(B_TRYING), {"B": "0.4.0"}, "0.4.0", PENDING_B, None)
    assert states(status) == {"A": ("", "good", False, False),
                              "B": ("0.4.0", "trying", True, True)}
    assert status.other() is not None and status.other().name == "A"


def test_b_kept() -> None:
    kept = Outcome("kept", "B", "0.4.0", at=2000.0)
    status = slots.build("B", env(B_KEPT), {"B": "0.4.0"}, "0.4.0", None, kept)
    assert states(status) == {"A": ("", "good", False, False),
                              "B": ("0.4.0", "good", True, True)}


def test_b_rolled_back_is_bad() -> None:
    back = Outcome("rolled back", "A", "0.4.0", "no handshake with hub in 180 s", at=2000.0)
    status = slots.build("A", env(B_BAD), {"B": "0.4.0"}, "0.1.0", None, back)
    assert states(status) == {"A": ("0.1.0", "good", True, True),
                              "B": ("0.4.0", "bad", False, False)}


def test_b_tried_out_by_grub() -> None:
    """B's kernel never reached the gate: GRUB's 3 tries are spent, A boots;
    RAUC has not marked B bad yet, so B still reads as trying."""
    status = slots.build("A", env(B_TRIED_OUT), {"B": "0.4.0"}, "0.1.0", PENDING_B, None)
    # the pending record names B, which is not booted: "new" until the gate
    # of this boot records the fallback
    assert states(status)["B"] == ("0.4.0", "new", False, False)
    status = slots.build("A", env(B_TRIED_OUT), {"B": "0.4.0"}, "0.1.0", None, None)
    assert states(status)["B"] == ("0.4.0", "trying", False, False)
    assert states(status)["A"] == ("0.1.0", "good", True, True)


def test_booted_slot_counting_a_try() -> None:
    """GRUB counts a try before every boot; until the gate marks it good the
    booted slot is trying."""
    status = slots.build("A", env({**FRESH, "A_TRY": "1"}), {}, "0.1.0", None, None)
    assert states(status)["A"] == ("0.1.0", "trying", True, True)


def test_both_spent_marks_no_next_boot() -> None:
    status = slots.build("A", env(BOTH_SPENT), {"B": "0.4.0"}, "0.1.0", None, None)
    assert not any(s.next_boot for s in status.slots)


def test_without_grubenv() -> None:
    status = slots.build("A", None, {"B": "0.4.0"}, "0.1.0", None, None,
                         problem="grubenv is 0 bytes, not 1024")
    assert states(status) == {"A": ("0.1.0", "?", True, False),
                              "B": ("0.4.0", "?", False, False)}
    assert status.problem == "grubenv is 0 bytes, not 1024"


def test_without_a_booted_slot() -> None:
    status = slots.build(None, env(FRESH), {}, "0.1.0", None, None)
    assert status.booted is None
    assert not any(s.booted for s in status.slots)
    assert states(status)["A"] == ("", "good", False, True)


def test_lines() -> None:
    status = slots.build("A", env(INSTALLED), {"B": "0.4.0"}, "0.1.0", PENDING_B, None)
    a, b = status.slots
    assert a.line() == "slot A: 0.1.0                  good    booted"
    assert b.line() == "slot B: 0.4.0                  new     next boot"
    fresh = slots.build("A", env(FRESH), {}, "0.1.0", None, None)
    assert fresh.slots[0].line() == "slot A: 0.1.0                  good    booted, next boot"
    assert fresh.slots[1].line() == "slot B: -                      empty"


def test_as_dict_is_json() -> None:
    back = Outcome("rolled back", "A", "0.4.0", "no handshake with hub in 180 s", at=2000.0)
    status = slots.build("A", env(INSTALLED), {"B": "0.4.0"}, "0.1.0", PENDING_B, back)
    data = json.loads(json.dumps(status.as_dict()))
    assert data["booted"] == "A"
    assert data["slots"][1] == {"name": "B", "version": "0.4.0", "booted": False,
                                "state": "new", "next_boot": True}
    assert data["pending"] == {"to_slot": "B", "to_version": "0.4.0"}
    assert data["last"]["line"] == "upgrade to 0.4.0 rolled back: no handshake with hub in 180 s"
    assert data["problem"] == ""
    empty = slots.build(None, None, {}, "", None, None).as_dict()
    assert empty["pending"] is None and empty["last"] is None
