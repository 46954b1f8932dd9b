"""grubenv: the 1024-byte block RAUC writes through grub-editenv and GRUB
reads at every boot. keel reads it for `keel upgrade status`: the slot GRUB
boots next must be the one grub.cfg.in would pick, and a damaged block (it is
written by another program, on a FAT partition) is a GrubenvError naming the
problem, never anything else."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from keel.upgrade import grubenv
from keel.upgrade.grubenv import GrubenvError
from tests.unit.upgrade.grubenv_blocks import (
    B_BAD,
    B_KEPT,
    B_TRIED_OUT,
    B_TRYING,
    BOTH_BAD,
    BOTH_SPENT,
    FRESH,
    HEADER,
    INSTALLED,
    by_hand,
)

EDITENV = shutil.which("grub-editenv")
SCENARIOS = [
    ("fresh image: A good, B empty", FRESH, "A"),
    ("installed into B, before the reboot", INSTALLED, "B"),
    ("B's trial boot under way", B_TRYING, "B"),
    ("B tried 2 times: one try left", {**INSTALLED, "B_TRY": "2"}, "B"),
    ("B tried 3 times: GRUB falls to A", B_TRIED_OUT, "A"),
    ("B marked bad by the gate", B_BAD, "A"),
    ("B kept by the gate", B_KEPT, "B"),
    ("both slots spent", BOTH_SPENT, None),
    ("both slots bad", BOTH_BAD, None),
]


def by_tool(directory: Path, values: dict[str, str]) -> bytes:
    """grubenv's bytes as the real grub-editenv writes them."""
    assert EDITENV is not None
    path = directory / "grubenv"
    path.unlink(missing_ok=True)
    subprocess.run([EDITENV, str(path), "create"], check=True, capture_output=True)
    subprocess.run([EDITENV, str(path), "set", *(f"{k}={v}" for k, v in values.items())],
                   check=True, capture_output=True)
    return path.read_bytes()


WRITERS = [
    pytest.param("hand", id="by-hand"),
    pytest.param("tool", id="grub-editenv",
                 marks=pytest.mark.skipif(EDITENV is None, reason="no grub-editenv here")),
]


def written(writer: str, directory: Path, values: dict[str, str]) -> bytes:
    return by_hand(values) if writer == "hand" else by_tool(directory, values)


# --- what GRUB boots next --------------------------------------------------------
@pytest.mark.parametrize("writer", WRITERS)
@pytest.mark.parametrize(("case", "values", "expected"), SCENARIOS,
                         ids=[s[0] for s in SCENARIOS])
def test_next_boot(writer: str, case: str, values: dict[str, str], expected: str | None,
                   tmp_path: Path) -> None:
    data = written(writer, tmp_path, values)
    assert len(data) == grubenv.SIZE
    assert grubenv.parse(data).next_boot() == expected, case


def test_fresh_image_read_in_full() -> None:
    env = grubenv.parse(by_hand(FRESH))
    assert env.order == ("A", "B")
    assert env.slots["A"] == grubenv.SlotBoot("A", ok=True, tries=0)
    assert env.slots["B"] == grubenv.SlotBoot("B", ok=False, tries=0)
    assert env.slots["A"].good and env.slots["A"].bootable
    assert not env.slots["B"].good and not env.slots["B"].bootable


def test_a_slot_trying_is_bootable_but_not_good() -> None:
    b = grubenv.parse(by_hand(B_TRYING)).slots["B"]
    assert b.bootable and not b.good
    spent = grubenv.parse(by_hand(B_TRIED_OUT)).slots["B"]
    assert not spent.bootable and not spent.good


def test_missing_slot_keys_read_as_not_ok() -> None:
    env = grubenv.parse(by_hand({"ORDER": "A B", "A_OK": "1"}))
    assert env.slots["A"] == grubenv.SlotBoot("A", ok=True, tries=0)
    assert env.slots["B"] == grubenv.SlotBoot("B", ok=False, tries=0)
    assert env.next_boot() == "A"


def test_other_variables_and_a_single_slot_order() -> None:
    values = {"saved_entry": "0", **FRESH, "ORDER": "B", "next_entry": ""}
    env = grubenv.parse(by_hand(values))
    assert env.order == ("B",)
    assert env.next_boot() is None  # B is not OK; A is not in ORDER


def test_comment_lines_are_skipped() -> None:
    """Debian's `grub-editenv FILE create` writes a WARNING comment line;
    GRUB itself skips every line that starts with '#'."""
    assert grubenv.parse(by_hand(INSTALLED, warning=True)).next_boot() == "B"


@pytest.mark.skipif(EDITENV is None, reason="no grub-editenv here")
def test_hand_built_bytes_match_the_tool(tmp_path: Path) -> None:
    """The by-hand builder (and post-image.sh) write what grub-editenv writes,
    but for its comment lines."""
    tool = by_tool(tmp_path, INSTALLED)
    hand = by_hand(INSTALLED)
    assert tool.startswith(HEADER)

    def lines(data: bytes) -> list[bytes]:
        return [x for x in data.split(b"\n") if x and not x.startswith(b"#")]

    assert lines(tool) == lines(hand)
    assert tool.rstrip(b"#").endswith(b"\n") and hand.rstrip(b"#").endswith(b"\n")


@pytest.mark.skipif(EDITENV is None, reason="no grub-editenv here")
def test_tool_set_on_the_flashed_file(tmp_path: Path) -> None:
    """RAUC's mark-active on the file post-image.sh made: grub-editenv set."""
    path = tmp_path / "grubenv"
    path.write_bytes(by_hand(FRESH))
    subprocess.run([EDITENV, str(path), "set", "ORDER=B A", "B_OK=1", "B_TRY=0"],
                   check=True, capture_output=True)
    env = grubenv.parse(path.read_bytes())
    assert env.order == ("B", "A")
    assert env.next_boot() == "B"


# --- damaged blocks: GrubenvError naming the problem -----------------------------
def _with(values: dict[str, str]) -> bytes:
    return by_hand(values)


DAMAGED = [
    ("empty file", b"", "grubenv is 0 bytes, not 1024"),
    ("one byte short", by_hand(FRESH)[:-1], "grubenv is 1023 bytes, not 1024"),
    ("one byte more", by_hand(FRESH) + b"#", "grubenv is 1025 bytes, not 1024"),
    ("no header", by_hand(FRESH)[len(HEADER):] + b"#" * len(HEADER),
     "does not start with GRUB's header"),
    ("zeroed", b"\0" * 1024, "does not start with GRUB's header"),
    ("not ASCII", by_hand(FRESH).replace(b"ORDER=A B", b"ORDER=A\xe9B"),
     "not ASCII at offset 32"),
    ("no ORDER", _with({k: v for k, v in FRESH.items() if k != "ORDER"}),
     "ORDER is '', not slots among A B"),
    ("empty ORDER", _with({**FRESH, "ORDER": ""}), "ORDER is ''"),
    ("unknown slot in ORDER", _with({**FRESH, "ORDER": "C A"}), "ORDER is 'C A'"),
    ("lower-case ORDER", _with({**FRESH, "ORDER": "a b"}), "ORDER is 'a b'"),
    ("TRY not a number", _with({**FRESH, "B_TRY": "x"}),
     "B_OK='0' B_TRY='x' are not numbers"),
    ("TRY negative", _with({**FRESH, "A_TRY": "-1"}), "A_TRY='-1' are not numbers"),
    ("TRY too long", _with({**FRESH, "A_TRY": "1234"}), "A_TRY='1234'"),
    ("TRY empty", _with({**FRESH, "B_TRY": ""}), "B_TRY=''"),
    ("OK not 0 or 1", _with({**FRESH, "A_OK": "yes"}), "A_OK='yes'"),
    ("a line not KEY=VALUE", by_hand(FRESH).replace(b"A_OK=1", b"A_OK 1"),
     "grubenv line 3: not KEY=VALUE"),
    ("an empty key", by_hand(FRESH).replace(b"A_OK=1", b"=A_OK1"),
     "grubenv line 3: not KEY=VALUE"),
]


@pytest.mark.parametrize(("case", "data", "message"), DAMAGED, ids=[d[0] for d in DAMAGED])
def test_damaged_block(case: str, data: bytes, message: str) -> None:
    with pytest.raises(GrubenvError) as err:
        grubenv.parse(data)
    assert message in str(err.value), case


def test_error_is_a_value_error() -> None:
    """Callers that catch ValueError for parse errors catch it too."""
    assert issubclass(GrubenvError, ValueError)


# --- property: damage never raises anything but GrubenvError ---------------------
@st.composite
def damaged(draw: st.DrawFn) -> bytes:
    """A valid block with a few bytes replaced, inserted or deleted."""
    data = bytearray(by_hand(draw(st.sampled_from([FRESH, INSTALLED, B_TRYING, BOTH_SPENT]))))
    for _ in range(draw(st.integers(1, 4))):
        at = draw(st.integers(0, len(data) - 1))
        op = draw(st.sampled_from(["replace", "insert", "delete"]))
        byte = draw(st.sampled_from(list(b"#=\n \x00\xff0123456789ABCabc_-")))
        if op == "replace":
            data[at] = byte
        elif op == "insert":
            data.insert(at, byte)
        else:
            del data[at]
    if draw(st.booleans()):  # keep the size, the usual case on a FAT partition
        data = data[:grubenv.SIZE] + b"#" * (grubenv.SIZE - len(data))
    return bytes(data)


blocks = st.one_of(
    st.binary(max_size=2048),
    st.binary(min_size=1024, max_size=1024),
    st.binary(max_size=1000).map(lambda b: (HEADER + b + b"#" * 1024)[:1024]),
    st.text(alphabet="#=\n AB_OKTRY0123456789", max_size=1000).map(
        lambda t: (HEADER + t.encode() + b"#" * 1024)[:1024]),
    damaged(),
)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(blocks)
def test_any_bytes_parse_or_raise_grubenv_error(data: bytes) -> None:
    try:
        env = grubenv.parse(data)
    except GrubenvError as err:
        assert str(err).startswith("grubenv")
        return
    assert env.order and set(env.order) <= {"A", "B"}
    assert env.next_boot() in (None, *env.order)
