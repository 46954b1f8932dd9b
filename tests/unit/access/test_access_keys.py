"""The SSH key store on /data and `keel access keys`: split on '\\n' only,
every line parsed strictly; a line that is not one clean key is left out of
authorized_keys (not read as two keys, as str.splitlines and dropbear would),
and `keel access` names it, escaped."""

from __future__ import annotations

import argparse
import base64

import pytest

from keel.access import cli as access_cli
from keel.access.ssh_keys import KeyStore, write_authorized_keys


def key_line(seed: int, comment: str) -> str:
    blob = b"\x00\x00\x00\x0bssh-ed25519\x00\x00\x00\x20" + bytes([seed]) * 32
    return f"ssh-ed25519 {base64.b64encode(blob).decode()} {comment}"


ALICE, MALLORY, BOB = key_line(1, "alice"), key_line(2, "mallory"), key_line(3, "bob")
SEPARATORS = ["\r", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029"]


@pytest.mark.parametrize("sep", SEPARATORS, ids=[f"U+{ord(c):04X}" for c in SEPARATORS])
def test_a_line_with_an_odd_separator_is_refused_whole_not_split(tmp_path, sep):
    store = KeyStore(tmp_path)
    store.path.write_text(f"{BOB}\n{ALICE}{sep}{MALLORY}\n", newline="")
    assert [k.comment for k in store.all()] == ["bob"]
    (n, why), = store.refused()
    assert n == 2 and "at character" in why and sep not in why
    out = tmp_path / "authorized_keys"
    write_authorized_keys((), store, out)
    assert out.read_bytes() == (BOB + "\n").encode()  # mallory never reaches dropbear


def test_a_pasted_line_with_a_carriage_return_changes_nothing(tmp_path):
    store = KeyStore(tmp_path)
    with pytest.raises(ValueError, match="carriage return"):
        store.add(f"{ALICE}\r{MALLORY}")
    assert not store.path.exists()
    store.add(BOB)
    with pytest.raises(ValueError, match="more than one line"):
        store.add(f"{ALICE}\n{MALLORY}")
    assert store.path.read_text() == BOB + "\n"


def test_the_config_s_keys_are_read_the_same_way(tmp_path):
    out = tmp_path / "authorized_keys"
    write_authorized_keys([f"{ALICE}\r{MALLORY}", BOB, f"{ALICE}\u2028{MALLORY}"],
                          KeyStore(tmp_path), out)
    assert out.read_text() == BOB + "\n"


def test_a_store_that_is_not_utf8_is_read_without_a_traceback(tmp_path):
    store = KeyStore(tmp_path)
    store.path.write_bytes(BOB.encode() + b"\n" + ALICE.encode() + b"\xff\xfe\n")
    assert [k.comment for k in store.all()] == ["bob"]
    assert [n for n, _ in store.refused()] == [2]


def run_access(monkeypatch, tmp_path, *rest: str) -> int:
    monkeypatch.setattr(access_cli, "KeyStore", lambda: KeyStore(tmp_path))
    import keel.model

    def no_config():
        raise keel.model.InvalidConfig("none here")

    monkeypatch.setattr(keel.model, "config_in_force", no_config)
    return access_cli._access(argparse.Namespace(what="keys", rest=list(rest)))


def test_keel_access_keys_add_refuses_escaped_and_lists_escaped(monkeypatch, tmp_path, capsys):
    assert run_access(monkeypatch, tmp_path, "add", f"{ALICE}\x1b[2J\x1b]0;owned\x07") == 1
    err = capsys.readouterr().err
    assert "\x1b" not in err and "\\x1b" in err and "nothing changed" in err
    assert run_access(monkeypatch, tmp_path, "add", f"{ALICE}\r{MALLORY}") == 1
    err = capsys.readouterr().err
    assert "\r" not in err and "carriage return (\\x0d)" in err
    assert run_access(monkeypatch, tmp_path, "add", BOB) == 0
    capsys.readouterr()
    store = KeyStore(tmp_path)
    with open(store.path, "a", newline="") as f:
        f.write(f"{ALICE}\x1b[31m{MALLORY}\n")
    assert run_access(monkeypatch, tmp_path) == 0
    out = capsys.readouterr().out
    assert "bob" in out and "mallory" not in out
    assert "refused, not in force: line 2" in out and "\\x1b" in out and "\x1b" not in out
    assert run_access(monkeypatch, tmp_path, "remove", "SHA256:\x1b[2J") == 1
    err = capsys.readouterr().err
    assert "\x1b" not in err and "\\x1b[2J" in err
