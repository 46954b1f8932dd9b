"""The root-shell gate: root's password from the shadow file, checked with the
system's crypt (keel.ui.shell)."""

from __future__ import annotations

from keel.access.password import RootPassword, shadow_entry
from keel.ui.shell import RootShell
from tests.ui.uihelpers import shell_with


def test_root_password_states(tmp_path):
    assert shell_with(tmp_path, "$6$salt$hash").status() is RootPassword.SET
    assert shell_with(tmp_path, "").status() is RootPassword.EMPTY
    assert shell_with(tmp_path, "!").status() is RootPassword.LOCKED
    assert RootShell(str(tmp_path / "missing")).status() is RootPassword.UNREADABLE
    shell = shell_with(tmp_path, "$6$salt$hash")
    assert shell.verify("s3cret") and not shell.verify("guess")
    assert not shell_with(tmp_path, "").verify("")  # empty never opens a shell
    assert shadow_entry("root::1:::\n") == ""


def test_real_hash_check_with_openssl(tmp_path):
    import subprocess

    from keel.system.crypt import default_hasher, openssl_hasher

    field = subprocess.run(["openssl", "passwd", "-6", "-salt", "abcdefgh", "-stdin"],
                           input="s3cret\n", capture_output=True, text=True).stdout.strip()
    for hasher in (openssl_hasher(), default_hasher()):
        shell = RootShell(str(tmp_path / "shadow"), hasher=hasher)
        (tmp_path / "shadow").write_text(f"root:{field}:19000::::::\n")
        assert shell.verify("s3cret") and not shell.verify("s3cret ")
