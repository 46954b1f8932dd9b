"""`keel upgrade FILE|URL`: the target as typed or pasted is a .raucb path or
an https URL (plain http refused), strictly; anything else is a TargetError whose message is
printable ASCII (what was refused shown escaped, never raw on the terminal)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from keel.upgrade.target import MAX_TARGET, TargetError, check_target

PRINTABLE_ASCII = frozenset(chr(c) for c in range(32, 127))


def refusal(text: str) -> str:
    with pytest.raises(TargetError) as err:
        check_target(text)
    message = str(err.value)
    assert message and set(message) <= PRINTABLE_ASCII, repr(message)
    return message


@pytest.mark.parametrize("target", [
    "/tmp/b/x.raucb",
    "x.raucb",
    "./keel-0.4.0+g1a2b3c4.raucb",
    "/data/keel/bundles/keel_0.4.0-rc1.raucb",
    "https://10.0.0.1/keel.raucb",
    "https://[fd00::1]:8443/b/keel.raucb",
    "https://updates.example.com/keel/0.4.0/keel-x86_64.raucb",
    "https://example.com/bundle?version=0.4.0&arch=x86_64",  # a URL need not end in .raucb
    "/" + "d" * (MAX_TARGET - 7) + ".raucb",  # as long as allowed
])
def test_accepted(target: str) -> None:
    assert check_target(target) == target


@pytest.mark.parametrize(("target", "shown"), [
    ("/tmp/\x1b[2J.raucb", "\\x1b"),
    ("/tmp/x.raucb\n", "\\x0a"),
    ("/tmp/x\r.raucb", "\\x0d"),
    ("/tmp/x\x00.raucb", "\\x00"),
    ("/tmp/x\x7f.raucb", "\\x7f"),
    ("/tmp/x\x9b.raucb", "\\x9b"),  # C1 CSI: a terminal's escape too
    ("/tmp/x\tb.raucb", "\\x09"),
    ("https://example.com/\u202ebcuar.exe", "\\u202e"),  # right-to-left override
    ("/tmp/\u200bx.raucb", "\\u200b"),  # zero-width space
    ("/tmp/caf\u00e9.raucb", "\\xe9"),
    ("/tmp/\u0445.raucb", "\\u0445"),  # Cyrillic small ha, looks like x
    ("/tmp/\U0001f600.raucb", "\\U0001f600"),
    ("/tmp/\udcff.raucb", "\\udcff"),  # a lone surrogate (os.fsdecode of a bad byte)
])
def test_control_and_non_ascii_characters_are_refused_escaped(target: str, shown: str) -> None:
    message = refusal(target)
    assert shown in message
    assert "not a path or URL" in message


@pytest.mark.parametrize("target", ["/tmp/my bundle.raucb", " /tmp/x.raucb", "/tmp/x.raucb ",
                                    "https://example.com/a b.raucb", "/tmp/x\u00a0y.raucb"])
def test_spaces_are_refused_by_name(target: str) -> None:
    message = refusal(target)
    assert "space" in message or "\\xa0" in message
    assert "holds  " not in message  # the space itself says nothing


@pytest.mark.parametrize(("target", "message"), [
    ("file:///tmp/x.raucb", "file:// is not https://"),
    ("ftp://example.com/x.raucb", "ftp:// is not https://"),
    ("casync://example.com/x.raucb", "casync:// is not https://"),
    ("HTTP://example.com/x.raucb", "HTTP:// is not https://"),
    ("://example.com/x.raucb", ":// is not https://"),
    ("/tmp/a://b.raucb", "/tmp/a:// is not https://"),
    ("x\\y://z", "x\\\\y:// is not"),  # a backslash shown doubled, unambiguous
])
def test_other_schemes_are_refused(target: str, message: str) -> None:
    assert message in refusal(target)


@pytest.mark.parametrize("target", ["http://10.0.0.1/keel.raucb",
                                    "http://[fd00::1]:8080/b/keel.raucb",
                                    "http://updates.example.com/keel.raucb"])
def test_plain_http_is_refused_by_name(target: str) -> None:
    """issue 37 item 4: someone on the path could hand over another bundle."""
    message = refusal(target)
    assert "plain http:// is refused" in message and "https://" in message


@pytest.mark.parametrize(("target", "message"), [
    ("/tmp/x.tar", "/tmp/x.tar is not a .raucb bundle"),
    ("/tmp/x.raucb.sig", "/tmp/x.raucb.sig is not a .raucb bundle"),
    ("/tmp/x.RAUCB", "/tmp/x.RAUCB is not a .raucb bundle"),
    ("/tmp/", "/tmp/ is not a .raucb bundle"),
    ("status2", "status2 is not a .raucb bundle"),
    ("example.com/keel.img", "example.com/keel.img is not a .raucb bundle"),
])
def test_other_files_are_refused(target: str, message: str) -> None:
    assert message in refusal(target)


def test_empty_and_overlong_are_refused() -> None:
    assert refusal("") == f"a bundle path or URL of 1 to {MAX_TARGET} characters"
    too_long = "/" + "d" * (MAX_TARGET - 6) + ".raucb"
    assert len(too_long) == MAX_TARGET + 1
    assert refusal(too_long) == f"a bundle path or URL of 1 to {MAX_TARGET} characters"
    assert refusal("https://example.com/" + "\x1b" * 10_000) == (
        f"a bundle path or URL of 1 to {MAX_TARGET} characters")


def test_target_error_is_a_value_error() -> None:
    assert issubclass(TargetError, ValueError)


# --- property: unchanged, or refused in printable ASCII ------------------------------
targets = st.one_of(
    st.text(max_size=80),
    st.text(alphabet=st.characters(min_codepoint=0, max_codepoint=0x2FF), max_size=60),
    st.tuples(st.sampled_from(["", "/tmp/", "http://", "https://", "file://", "x://"]),
              st.text(max_size=30),
              st.sampled_from(["", ".raucb", ".raucb\n", "/b.raucb"])).map("".join),
    st.text(alphabet=st.characters(min_codepoint=33, max_codepoint=126), max_size=40).map(
        lambda t: t + ".raucb"),
    st.integers(MAX_TARGET - 8, MAX_TARGET + 8).map(lambda n: "/" + "d" * n + ".raucb"),
)


@settings(max_examples=250, deadline=None)
@given(targets)
def test_any_text_is_accepted_unchanged_or_refused_in_ascii(text: str) -> None:
    try:
        accepted = check_target(text)
    except TargetError as err:
        message = str(err)
        assert message and set(message) <= PRINTABLE_ASCII, repr(message)
        return
    assert accepted == text
    assert 1 <= len(text) <= MAX_TARGET
    assert all(33 <= ord(c) < 127 for c in text)
    assert text.startswith("https://") or text.endswith(".raucb")


def test_a_tunnel_wait_out_of_range_stops_before_anything_is_read(capsys, monkeypatch) -> None:
    """`keel upgrade --tunnel-wait 5 x.raucb`: refused with the range, the
    bundle never looked at, nothing installed."""
    import keel.upgrade.flow as flow
    from keel.cli import main

    monkeypatch.setattr(flow, "install_bundle", lambda *a, **k: pytest.fail("installed"))
    assert main(["upgrade", "--tunnel-wait", "5", "/nowhere/x.raucb"]) == 1
    err = capsys.readouterr().err
    assert "--tunnel-wait 5: the tunnel wait must be whole seconds from 30 to 3600" in err
