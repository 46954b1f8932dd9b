"""Property: whatever /data holds, `keel apply --boot` (the Applier and the
fallback chain, with a runner that only records) never raises and ends
either on the first config that is valid or on a named fallback: random
bytes, deep nesting, huge numbers, valid files with one field mutated or
with a few characters changed."""

from __future__ import annotations

import contextlib
import tomllib
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from keel.apply import boot
from keel.config import paths
from keel.config.errors import ConfigError
from keel.config.load import parse_config
from tests.unit.apply.fake_router import FAKE_PRIVATE_KEY, fake_router
from tests.unit.config.test_config_property import KEYS, LEAVES, document, place, value_for

BOOT = settings(max_examples=150, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
EDGE = paths.example_text("edge")
DEFAULT = EDGE.split("[wireguard]")[0].replace('attach = "tunnel"', 'attach = "wan"')

# --- generated files -------------------------------------------------------------
random_bytes = st.binary(max_size=3000)
openers = st.sampled_from(["[", "{a = ", "a.", "[[", "{ 'x' = [", "b = ["])
deep = st.tuples(st.lists(openers, min_size=20, max_size=400),
                 st.sampled_from(["", "1", "'s'", "]]]", "}"])).map(
    lambda t: ("[wan]\nx = " + "".join(t[0]) + t[1] + "\n").encode())
huge_numbers = st.tuples(st.sampled_from(LEAVES), st.integers(15, 6000),
                         st.sampled_from(["", "-", "+", "0x"])).map(
    lambda t: document(place(t[0], 0)[0]).replace(
        " = 0", f" = {t[2]}{'9' * t[1]}", 1).encode())
mutated_field = st.sampled_from(LEAVES).flatmap(
    lambda p: value_for(KEYS[p]).map(lambda v: document(place(p, v)[0]).encode()))


@st.composite
def mutated_text(draw: Any) -> bytes:
    """The edge example with a few characters replaced, inserted or deleted."""
    text = bytearray(EDGE.encode())
    for _ in range(draw(st.integers(1, 4))):
        at = draw(st.integers(0, len(text) - 1))
        op = draw(st.sampled_from(["replace", "insert", "delete"]))
        char = draw(st.sampled_from(list(b"[]{}\"'=.,#\n\\0123456789azAZ \xff\xe9\x00")))
        if op == "replace":
            text[at] = char
        elif op == "insert":
            text.insert(at, char)
        else:
            del text[at]
    return bytes(text)


files = st.one_of(random_bytes, deep, huge_numbers, mutated_field, mutated_text(),
                  st.just(EDGE.encode()), st.just(b"\xef\xbb\xbf" + DEFAULT.encode()))


def valid(content: bytes | None) -> bool:
    if content is None:
        return False
    try:
        text = content.removeprefix(b"\xef\xbb\xbf").decode()
        parse_config(text, "x")
    except (ConfigError, UnicodeDecodeError):
        return False
    return True


def first_that_applies(chain: list[tuple[str, bytes]], work) -> str:
    """The name of the first config in `chain` that is valid as the boot
    applies it: a fallback cut down to the access the failed ones before it
    allow (keel.apply.narrow, as boot.narrowed does it)."""
    work.mkdir(parents=True)
    newer: list[str] = []
    for n, (name, content) in enumerate(chain):
        path = work / f"candidate{n}.toml"
        path.write_bytes(content)
        if newer:
            item = boot.Candidate(name, path, in_force=name == "revision 1")
            path, _ = boot.narrowed(item, newer, work / f"run{n}")
        if valid(path.read_bytes()):
            return name
        # the boot reads a failed config as UTF-8 (a BOM aside) or not at all
        with contextlib.suppress(UnicodeDecodeError):
            newer.append(content.decode("utf-8-sig"))
    raise AssertionError("the shipped default is valid")


@BOOT
@given(files, st.one_of(st.none(), files))
def test_boot_never_raises_and_ends_applied_or_on_a_named_fallback(user, revision):
    with fake_router(DEFAULT) as router:
        router.user.write_bytes(user)
        if revision is not None:
            rev = router.revisions.record("placeholder\n", "earlier")
            rev.path.write_bytes(revision)
        rc = router.boot()  # must not raise

        chain = [(str(router.user), user)]
        if revision is not None and revision != user:  # the same text is tried once
            chain.append(("revision 1", revision))
        chain.append((str(router.default), DEFAULT.encode()))
        expected = first_that_applies(chain, router.root / "oracle")
        record = boot.read_record(router.run_dir)
        assert rc == 0 and record is not None
        assert record.applied == expected
        failed = [name for name, _ in chain[:[n for n, _ in chain].index(expected)]]
        assert [f.source for f in record.failures] == failed
        for name in failed:
            lines = [s for s in router.said if s.startswith(f"keel: {name} failed: ")]
            assert len(lines) == 1 and lines[0].split(" failed: ", 1)[1].strip()
        said = "\n".join(router.said)
        assert "Traceback" not in said and all("\n" not in line for line in router.said)
        assert FAKE_PRIVATE_KEY not in said
        if failed:
            assert router.said[-1] == (f"keel: applied {expected} (fallback; `keel doctor` "
                                       "says why)")
        else:
            assert router.said[-1] == f"keel: applied {expected}"


def test_the_generated_files_reach_every_stage():
    """The generators above do make the files they are named for."""
    for text in (document(place("wan.shaping.upload_kbit", 0)[0]),):
        assert tomllib.loads(text)["wan"]["shaping"]["upload_kbit"] == 0
    assert valid(EDGE.encode()) and valid(b"\xef\xbb\xbf" + DEFAULT.encode())
    assert not valid(b"[wan]\nx = " + b"[" * 100 + b"\n")
    assert not valid(document(place("wan.shaping.upload_kbit", 0)[0]).replace(
        " = 0", " = " + "9" * 5000, 1).encode())


def test_the_failing_example_hypothesis_found_applies_the_revision_cut_down():
    """A user config that fails (a wrong type) before a valid revision whose
    peer the user's config no longer has: the peer is cut, and with it the
    route only it took; the rest of the revision applies (not the default)."""
    user = EDGE.replace('ssh_on_wan = false', 'ssh_on_wan = false\n[access]\nssh_keys = 9')
    revision = EDGE.replace(EDGE.split('public_key = "')[1].split('"')[0], "A" * 43 + "=")
    assert not valid(user.encode()) and valid(revision.encode())
    with fake_router(DEFAULT) as router:
        router.user.write_text(user)
        router.revisions.record("placeholder\n", "earlier").path.write_text(revision)
        assert router.boot() == 0
        record = boot.read_record(router.run_dir)
        assert record.applied == "revision 1"
        assert record.narrowed == ("WireGuard peer AAAAAAAA",
                                   "WireGuard route 172.31.77.0/24 (no kept peer takes it)")
