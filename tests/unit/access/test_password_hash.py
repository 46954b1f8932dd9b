"""Root's password hash: one scheme that every way in checks (SHA-512 crypt
with rounds: BusyBox's login knows it, not yescrypt), made and checked by
each of keel's crypt backends alike."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from keel.doctor.checks import OK, WARN, check_password
from keel.system import crypt

BACKENDS = {"libcrypt": crypt.libcrypt_hasher(), "openssl": crypt.openssl_hasher()}


@pytest.mark.parametrize("name", sorted(BACKENDS))
def test_a_new_hash_is_sha512_with_rounds_and_every_backend_checks_it(name):
    hasher = BACKENDS[name]
    if name == "openssl" and shutil.which("openssl") is None:
        pytest.fail("openssl is missing: host-deps installs it")
    assert hasher is not None, f"{name}: no backend on this host"
    hashed = crypt.new_hash("pa55 word", hasher, rounds=6000)
    assert hashed.startswith("$6$rounds=6000$") and crypt.login_checks(hashed)
    salt = hashed.split("$")[3]
    assert len(salt) == crypt.SALT_LENGTH and set(salt) <= set(crypt.SALT_ALPHABET)
    for other in BACKENDS.values():  # another implementation agrees, as login must
        assert other is not None and other("pa55 word", hashed) == hashed
        assert other("pa55 worD", hashed) != hashed


def test_the_default_rounds_are_what_the_module_says():
    hashed = crypt.new_hash("x")
    assert hashed.startswith(f"$6$rounds={crypt.SHA512_ROUNDS}$")


def test_an_empty_password_is_refused():
    with pytest.raises(ValueError, match="empty"):
        crypt.new_hash("")


def test_a_crypt_that_cannot_make_the_scheme_fails_loudly():
    with pytest.raises(OSError, match="SHA-512"):
        crypt.new_hash("x", lambda password, setting: "$y$j9T$abc$def")


@pytest.mark.parametrize("hashed, checks", [
    ("$6$rounds=5000$salt$hash", True), ("$6$salt$hash", True), ("$5$salt$hash", True),
    ("$y$j9T$salt$hash", False), ("$2b$10$hash", False), ("$gy$j9T$salt$h", False),
    ("$1$salt$hash", False),
])
def test_which_hashes_the_console_login_checks(hashed, checks):
    assert crypt.login_checks(hashed) is checks


def test_doctor_names_a_hash_the_login_cannot_check_and_never_shows_it():
    assert check_password(None) == [] and check_password("") == [] and check_password("!") == []
    (ok,) = check_password("$6$rounds=200000$abc$def")
    assert ok.status == OK
    (warn,) = check_password("$y$j9T$secret-salt$secret-hash")
    assert warn.status == WARN and "set it again" in warn.detail
    assert "secret" not in repr(warn)


def test_the_release_busybox_login_knows_the_scheme_keel_stores():
    """The release image's BusyBox is built with its own crypt and SHA-512
    crypt (its fragment); the dev image's is checked by logging in (lab)."""
    fragment = (Path(__file__).parents[3] / "board/keel/x86_64/busybox.fragment").read_text()
    options = {line.strip() for line in fragment.splitlines() if line.startswith("CONFIG_")}
    assert crypt.LOGIN_SCHEME == "$6$"
    assert {"CONFIG_USE_BB_CRYPT=y", "CONFIG_USE_BB_CRYPT_SHA=y"} <= options
