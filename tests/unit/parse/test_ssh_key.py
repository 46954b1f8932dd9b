"""SSH public key lines (keel.parse.ssh_key): taken only as TYPE BASE64
[COMMENT], the data a well-formed key of that type, the comment printable
ASCII, at most MAX_LINE bytes; everything else refused with a reason that
never holds a raw control character. dropbear ends an authorized_keys line
at '\\r' as well as '\\n': a line keel reads as one key must be one key to
dropbear too."""

from __future__ import annotations

import base64

import pytest

from keel.parse.ssh_key import (
    MAX_COMMENT,
    MAX_LINE,
    KeyLineError,
    parse_public_key,
    split_key_lines,
)


def string(data: bytes | str) -> bytes:
    raw = data.encode() if isinstance(data, str) else data
    return len(raw).to_bytes(4, "big") + raw


def mpint(n: int) -> bytes:
    raw = n.to_bytes(n.bit_length() // 8 + 1, "big")  # a leading 0 when the top bit is set
    return string(raw)


def line(kind: str, *fields: bytes, comment: str = "", named: str | None = None) -> str:
    blob = string(named if named is not None else kind) + b"".join(fields)
    text = f"{kind} {base64.b64encode(blob).decode()}"
    return f"{text} {comment}" if comment else text


ED = line("ssh-ed25519", string(bytes(range(32))), comment="alice@laptop")
ED_B = line("ssh-ed25519", string(bytes(range(32, 64))), comment="mallory")


def rsa(bits: int, comment: str = "rsa") -> str:
    return line("ssh-rsa", mpint(65537), mpint((1 << (bits - 1)) | 1), comment=comment)


def point(size: int) -> bytes:
    return string(b"\x04" + bytes(size - 1))


# real keys made by ssh-keygen (public keys: not secrets)
REAL_ED = ("ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAINm9xjg604uF+6YtQtjWmk9KXScj3nPUWJnSczSqFTc1 "
           "alice@laptop")
REAL_EC = ("ecdsa-sha2-nistp256 AAAAE2VjZHNhLXNoYTItbmlzdHAyNTYAAAAIbmlzdHAyNTYAAABBBMah6NJnKFxE"
           "BzXywfNiexGI4aMDIi4UkJTDN07nt4kjtM+ReeVsf0s6WWtD2myYv5GCGn9rGAuljn/DglfDOdY= d")
REAL = [REAL_ED, REAL_EC]
EC_B64 = REAL_EC.split()[1]


GOOD = [
    ED,
    line("ssh-ed25519", string(bytes(32))),  # no comment
    line("ecdsa-sha2-nistp256", string("nistp256"), point(65), comment="a b  c"),
    line("ecdsa-sha2-nistp384", string("nistp384"), point(97)),
    line("ecdsa-sha2-nistp521", string("nistp521"), point(133), comment="x" * MAX_COMMENT),
    line("sk-ssh-ed25519@openssh.com", string(bytes(32)), string("ssh:"), comment="yubi"),
    line("sk-ecdsa-sha2-nistp256@openssh.com", string("nistp256"), point(65), string("ssh:")),
    rsa(1024), rsa(2048), rsa(4096, "c" * MAX_COMMENT),
    *REAL,
]


@pytest.mark.parametrize("text", GOOD)
def test_keys_of_every_type_are_taken_and_written_back_the_same(text):
    key = parse_public_key(text)
    assert key.line == text.strip()
    assert parse_public_key(f"  {text}  ").line == text  # spaces around are fine
    assert len(text) <= MAX_LINE


def test_the_longest_key_taken_fits_the_limit():
    longest = rsa(4096, "c" * MAX_COMMENT)
    assert len(longest) <= MAX_LINE < 4200  # dropbear before 2026.92 splits at ~4200


# --- what today's code took, and dropbear reads otherwise ---------------------


def test_a_carriage_return_is_refused_not_read_as_one_key():
    """dropbear reads `A alice\\rB mallory` as two keys; keel listed only A."""
    with pytest.raises(KeyLineError, match=r"carriage return \(\\x0d\) at character \d+"):
        parse_public_key(ED + "\r" + ED_B)
    with pytest.raises(KeyLineError, match="carriage return"):
        parse_public_key(ED + "\r")


SEPARATORS = ["\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029", "\t",
              "\x00", "\x1b", "\x7f", "\u00a0", "\ufeff", "\u202e"]


@pytest.mark.parametrize("sep", SEPARATORS, ids=[f"U+{ord(c):04X}" for c in SEPARATORS])
def test_every_odd_separator_or_control_is_refused_and_named_escaped(sep):
    for text in (ED + sep + ED_B, ED.replace("alice", f"al{sep}ice"), sep + ED):
        with pytest.raises(KeyLineError) as err:
            parse_public_key(text)
        reason = str(err.value)
        assert "at character" in reason
        assert all(" " <= ch <= "~" for ch in reason), reason  # nothing raw


def test_a_newline_is_more_than_one_line():
    with pytest.raises(KeyLineError, match="more than one line"):
        parse_public_key(ED + "\n" + ED_B)


def test_a_line_longer_than_the_limit_is_refused():
    with pytest.raises(KeyLineError, match=f"longer than {MAX_LINE} bytes"):
        parse_public_key(ED.replace("alice@laptop", "a" * 2000))
    with pytest.raises(KeyLineError, match=f"longer than {MAX_LINE} bytes"):
        parse_public_key(ED + " " + "x" * 5000)  # dropbear would split it
    with pytest.raises(KeyLineError, match="comment is longer"):
        parse_public_key(ED + "x" * MAX_COMMENT)


def test_rsa_keys_over_4096_bits_are_refused():
    with pytest.raises(KeyLineError, match=r"longer than 1024 bytes.*RSA key of at most 4096"):
        parse_public_key(rsa(8192, ""))
    with pytest.raises(KeyLineError, match="RSA key of 4097 bits"):
        parse_public_key(rsa(4097))
    with pytest.raises(KeyLineError, match="RSA key of 512 bits"):
        parse_public_key(rsa(512))


@pytest.mark.parametrize("b64", [
    EC_B64[:-5],  # cut: not a multiple of 4
    EC_B64[:-4] + "!!!!",
    EC_B64[:20] + " " + EC_B64[20:],
    EC_B64 + "=",  # extra padding
    EC_B64[:-1],  # padding missing
    EC_B64[:-2] + "Z=",  # the same bytes, with unused bits set: not canonical
    EC_B64[:-8] + "====",
])
def test_bad_base64_is_refused(b64):
    with pytest.raises(KeyLineError, match="the key's"):
        parse_public_key(f"ecdsa-sha2-nistp256 {b64} alice")


def test_the_data_must_be_a_key_of_the_stated_type():
    with pytest.raises(KeyLineError, match="of type ssh-ed25519, not ssh-rsa"):
        parse_public_key(line("ssh-rsa", string(bytes(32)), named="ssh-ed25519"))
    with pytest.raises(KeyLineError, match="not a ssh-ed25519 key"):
        parse_public_key(line("ssh-ed25519", string(bytes(32)), named="ssh-ed25519\x1b[2J"))


@pytest.mark.parametrize("text", [
    line("ssh-ed25519", string(bytes(5))),  # the right type string, a 5-byte key
    line("ssh-ed25519", string(bytes(32)), string(ED_B)),  # a second key inside
    line("ssh-ed25519", string(bytes(32)) + b"\x00"),  # a byte after the key
    line("ssh-ed25519"),  # the type and nothing else
    line("ecdsa-sha2-nistp256", string("nistp384"), point(65)),
    line("ecdsa-sha2-nistp384", string("nistp384"), point(65)),
    line("sk-ssh-ed25519@openssh.com", string(bytes(32))),  # no application
    line("sk-ssh-ed25519@openssh.com", string(bytes(32)), string("web:\n")),
    line("ssh-rsa", string(b"\x80\x01"), mpint(1 << 2047 | 1)),  # negative exponent
    line("ssh-rsa", mpint(65537), string(b"\x00\x01" + bytes(255))),  # padded modulus
])
def test_malformed_key_data_is_refused(text):
    with pytest.raises(KeyLineError, match=r"the key's|the security key's|RSA"):
        parse_public_key(text)


@pytest.mark.parametrize("text", [
    'from="10.0.0.0/8" ' + ED,
    'command="/bin/sh",no-pty ' + ED,
    "restrict " + ED,
])
def test_options_before_the_type_are_refused(text):
    with pytest.raises(KeyLineError, match="options before the key type"):
        parse_public_key(text)


def test_a_comment_is_printable_ascii():
    with pytest.raises(KeyLineError, match=r"outside printable ASCII \(é\)"):
        parse_public_key(ED.replace("alice", "alicé"))
    with pytest.raises(KeyLineError, match=r"\\x1b"):
        parse_public_key(ED + "\x1b]0;pwned\x07")
    key = parse_public_key(ED + " [bold]x\\y")
    assert key.comment.endswith("[bold]x\\y")
    assert key.describe().endswith("[bold]x\\\\y")  # shown: a backslash doubled


def test_refusals_name_the_thing_and_never_echo_a_control():
    for text in ("", "   ", "ssh-dss AAAA", "\x1b[2J AAAA", "ssh-ed25519",
                 "-----BEGIN OPENSSH PRIVATE KEY-----", b"ssh-ed25519 \xff", 42):
        with pytest.raises(KeyLineError) as err:
            parse_public_key(text)  # type: ignore[arg-type]
        assert str(err.value) and all(" " <= ch <= "~" for ch in str(err.value))


def test_bytes_are_taken_as_ascii():
    assert parse_public_key(ED.encode()).line == ED


def test_lines_are_split_on_newline_only():
    text = f"{ED}\r{ED_B}\n\n  \n{ED}\x0b{ED_B}\n{ED}\u2028x\n{ED}\n"
    assert split_key_lines(text) == [(1, f"{ED}\r{ED_B}"), (4, f"{ED}\x0b{ED_B}"),
                                     (5, f"{ED}\u2028x"), (6, ED)]
