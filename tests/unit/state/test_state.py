"""Revisions on /data and the WireGuard private key file."""

from __future__ import annotations

import stat
import subprocess

import pytest

from keel.state.revisions import RevisionStore
from keel.wireguard import keys

FAKE_KEY = "mJ1JYpGGd2ghT2bsyeZmoTpOG3C/a1j4KZl41LPf5l8="


class FakeRunner:
    def __init__(self) -> None:
        self.ran: list[list[str]] = []
        self.inputs: list[str | None] = []

    def output(self, argv, input=None, **_):
        self.ran.append(list(argv))
        self.inputs.append(input)
        return {"genkey": FAKE_KEY + "\n", "pubkey": "PUBLIC=\n"}[argv[1]]

    def run(self, argv, input=None, **kw):
        return subprocess.CompletedProcess(argv, 0, self.output(argv, input), "")


def test_revisions_are_numbered_and_current_moves(tmp_path):
    store = RevisionStore(tmp_path / "revisions")
    assert store.current() is None and store.previous() is None
    one = store.record("a = 1\n", "first")
    two = store.record("a = 2\n", "second")
    assert (one.number, two.number) == (1, 2)
    assert store.current().text() == "a = 2\n"
    assert store.previous().number == 1
    store.set_current(1)
    assert store.current().note == "first"
    with pytest.raises(LookupError, match="no revision 9"):
        store.get(9)


def test_private_key_made_once_with_mode_0600(tmp_path):
    path = tmp_path / "keel" / "wireguard.key"
    runner = FakeRunner()
    assert keys.ensure_private_key(path, runner) is True
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert keys.ensure_private_key(path, runner) is False
    assert runner.ran == [["wg", "genkey"]]
    assert keys.public_key(path, runner) == "PUBLIC="
    # the private key goes to `wg pubkey` on stdin, never in an argv
    assert all(FAKE_KEY not in " ".join(argv) for argv in runner.ran)


def test_a_readable_key_file_is_refused_without_showing_it(tmp_path):
    path = tmp_path / "wireguard.key"
    path.write_text(FAKE_KEY + "\n")
    path.chmod(0o644)
    with pytest.raises(keys.KeyFileError, match="chmod 600") as err:
        keys.check_private_key(path)
    assert FAKE_KEY not in str(err.value)
