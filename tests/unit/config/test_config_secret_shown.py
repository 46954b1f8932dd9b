"""No value shaped like a secret is ever shown in a config message, wherever
it was pasted: a WireGuard private key or a password hash pasted into
access.ssh_keys (once echoed, 37 of the key's 44 characters, in "not an SSH
public key type: ..."), or anywhere else a reason might quote a value; and
the SSH key parser, which the console's `keel access` uses too, never
quotes one either. Property tests over random keys and hashes."""

from __future__ import annotations

import base64
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from keel.config.errors import ConfigError
from keel.config.load import load_text
from keel.parse.ssh_key import KeyLineError, parse_public_key
from keel.secret_shape import REDACTED, looks_secret, redact

FAST = settings(max_examples=200, deadline=None)
WINDOW = 8  # no run of this many of a secret's characters may be shown

wg_keys = st.binary(min_size=32, max_size=32).map(lambda b: base64.b64encode(b).decode())
_SALT = "./0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
crypt_hashes = st.tuples(
    st.sampled_from(["$6$", "$5$", "$1$", "$y$j9T$", "$2b$12$", "$argon2id$v=19$m=65536,t=3,p=4$"]),
    st.text(_SALT, min_size=8, max_size=16), st.text(_SALT, min_size=22, max_size=86),
).map(lambda t: f"{t[0]}{t[1]}${t[2]}")
hex_tokens = st.binary(min_size=16, max_size=32).map(bytes.hex)
secrets = st.one_of(wg_keys, crypt_hashes, hex_tokens)
# how a secret may be pasted in a key line
pasted = st.sampled_from(["{s}", "{s} root@host", "ssh-ed25519 {s}", "ssh-ed25519 {s} c",
                          " {s} ", "ssh-rsa {s}", "from=x {s}", "{s}{s}", "x{s}"])


def windows(secret: str) -> set[str]:
    return {secret[i:i + WINDOW] for i in range(len(secret) - WINDOW + 1)}


def message(text: str) -> str:
    """The loader's message ("" when the text is a valid config)."""
    try:
        load_text(text, "t.toml")
    except ConfigError as err:
        return str(err)
    return ""


def assert_hidden(secret: str, shown: str, noise: str = "") -> None:
    """No run of the secret in `shown` but those the message has anyway
    (`noise`: its text for a harmless value, with examples like 192.168.77.50)."""
    leaked = [w for w in windows(secret) if w in shown and w not in noise]
    assert not leaked, f"{len(leaked)} runs of the secret shown"


@FAST
@given(secrets, pasted)
def test_a_secret_pasted_as_an_ssh_key_is_never_shown(secret: str, how: str) -> None:
    def said(line: str) -> str:
        with pytest.raises(KeyLineError) as err:
            parse_public_key(line)
        return str(err.value)

    def loaded(line: str) -> str:
        return message(f"[access]\nssh_keys = [{json.dumps(line)}]\n")

    line, harmless = how.format(s=secret), how.format(s="?")
    assert_hidden(secret, loaded(line), loaded(harmless))
    assert_hidden(secret, said(line), said(harmless))


@FAST
@given(secrets, st.sampled_from(["wan.interface", "lan.dhcp_lease", "system.hostname",
                                 "wireguard.peer[0].endpoint", "forward[0].to",
                                 "wan.shaping.overhead", "tuning.governor"]))
def test_a_secret_pasted_into_any_string_key_is_never_shown(secret: str, where: str) -> None:
    text = {
        "wan.interface": "[wan]\ninterface = {v}\n",
        "lan.dhcp_lease": "[lan]\ndhcp_lease = {v}\n",
        "system.hostname": "[system]\nhostname = {v}\n",
        "wireguard.peer[0].endpoint": "[[wireguard.peer]]\npublic_key = {v}\n"
                                      "allowed_ips = ['10.0.0.1/32']\nendpoint = {v}\n",
        "forward[0].to": "[[forward]]\nname = 'a'\nport = 80\nto = {v}\n",
        "wan.shaping.overhead": "[wan.shaping]\noverhead = {v}\n",
        "tuning.governor": "[tuning]\ngovernor = {v}\n",
    }[where]
    assert_hidden(secret, message(text.format(v=json.dumps(secret))),
                  message(text.format(v='"?"')))


def test_the_reported_private_key_and_hash_are_not_echoed() -> None:
    key = "ltEcPVtzDaiFPF8RdTnl2QKUrNHdxd9Ur7zglq1IA7E="
    for secret in (key, "$6$saltsalt$" + "a" * 86, "$y$j9T$abcdefghijklmnop$" + "B" * 43):
        (line,) = message(f"[access]\nssh_keys = ['{secret}']\n").splitlines()
        assert line.startswith("t.toml: access.ssh_keys[0]: not an SSH public key type (")
        assert_hidden(secret, line)


def test_a_key_type_that_is_a_word_is_still_named() -> None:
    with pytest.raises(KeyLineError, match="not an SSH public key type: ssh-dss "):
        parse_public_key("ssh-dss AAAAB3NzaC1kc3MAAACBAP")


@FAST
@given(secrets, st.text(max_size=40), st.text(max_size=40))
def test_redact_hides_a_secret_among_any_words(secret: str, before: str, after: str) -> None:
    out = redact(f"{before} {secret} {after}")
    assert secret not in out and REDACTED in out


@pytest.mark.parametrize("text", [
    "wan.shaping.upload_min_kbit: missing: adaptive = true (at most upload_kbit = 2000)",
    "forward[3].to: not inside the LAN 192.168.77.0/24 (lan.address)",
    "ipv6.routed_prefix: /28: shorter than /32 (2001:db8:100::/56)",
    "expected one of ssh-ed25519, ecdsa-sha2-nistp256, sk-ecdsa-sha2-nistp256@openssh.com",
    "wireguard.peer[12].persistent_keepalive: outside 0-65535 s",
])
def test_redact_leaves_words_addresses_and_key_names(text: str) -> None:
    assert redact(text) == text
    assert not any(looks_secret(w) for w in text.split())
