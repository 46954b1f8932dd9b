"""The one reading path (read_config): size, encoding, limits checked before
TOML is parsed, readable syntax errors, removed keys, secret-looking key
names; and `keel config check` on top of it."""

from __future__ import annotations

import time
import tomllib
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from keel.config import paths
from keel.config.errors import MAX_SHOWN, ConfigError
from keel.config.keypath import looks_secret
from keel.config.load import load_text, parse_config, read_config
from keel.config.prescan import MAX_DEPTH, prescan
from keel.config.removed import drop_removed
from tests.unit.config.config_cli import run_config as _run
from tests.unit.config.test_config_property import document

SECRET = "mJ1JYpGGd2ghT2bsyeZmoTpOG3C/a1j4KZl41LPf5lw="


def lines(text: str) -> list[str]:
    with pytest.raises(ConfigError) as err:
        load_text(text, "t.toml")
    return err.value.lines()


def file_lines(path: Path) -> list[str]:
    with pytest.raises(ConfigError) as err:
        read_config(path)
    return err.value.lines()


# --- bytes and text ------------------------------------------------------------
def test_dev_zero_ends_at_once():
    start = time.monotonic()
    assert file_lines(Path("/dev/zero")) == ["/dev/zero: larger than 1 MiB: not a keel config"]
    assert time.monotonic() - start < 2


def test_a_file_over_1_mib_is_refused_before_parsing(tmp_path):
    path = tmp_path / "big.toml"
    path.write_text("# " + "x" * (1 << 20) + "\n")
    assert file_lines(path) == [f"{path}: larger than 1 MiB: not a keel config"]


def test_unreadable_files(tmp_path):
    assert file_lines(tmp_path / "none.toml") == [
        f"{tmp_path / 'none.toml'}: cannot read: No such file or directory"]
    assert file_lines(tmp_path) == [f"{tmp_path}: cannot read: Is a directory"]


def test_a_utf8_bom_is_accepted_and_not_kept(tmp_path):
    path = tmp_path / "bom.toml"
    path.write_bytes(b"\xef\xbb\xbf[system]\nhostname = 'bom'\n")
    loaded = read_config(path)
    assert loaded.config.system.hostname == "bom"
    assert loaded.text == "[system]\nhostname = 'bom'\n"


def test_not_utf8_names_the_line_column_and_offset(tmp_path):
    path = tmp_path / "latin.toml"
    path.write_bytes(b"[system]\nhostname = '\xe9'\n")
    assert file_lines(path) == [
        f"{path}: not UTF-8 text: byte 0xe9 at line 2, column 13 (byte offset 21)"]
    utf16 = tmp_path / "utf16.toml"
    utf16.write_bytes("[system]\n".encode("utf-16"))
    assert file_lines(utf16) == [f"{utf16}: not UTF-8 text: UTF-16 (save it as UTF-8)"]


def test_the_source_name_is_the_one_given(tmp_path):
    path = tmp_path / "0004.toml"
    path.write_text("[wan]\nmode = 1\n")
    with pytest.raises(ConfigError) as err:
        read_config(path, "revision 4")
    assert err.value.lines() == ["revision 4: wan.mode: must be a string, not an integer"]


# --- limits before tomllib -------------------------------------------------------
@pytest.mark.parametrize(("text", "line"), [
    ("a = " + "[" * 1000 + "]" * 1000, 1),
    ("a = [" + "1, [" * 500 + "]" * 501, 1),
    ("\na = " + "{b = " * 300 + "1" + "}" * 300, 2),
    ("[" + ".".join(["a"] * 100) + "]\n", 1),
    ("[[" + ".".join(["a"] * 40) + "]]\n", 1),
    ("[a]\n" + "b." * 50_000 + "c = 1\n", 2),
    ("a = [\n[\n" + "[" * 40 + "]" * 42 + "\n", 3),
])
def test_deep_nesting_is_refused_with_its_line(text, line):
    assert lines(text) == [f"t.toml: line {line}: nested deeper than {MAX_DEPTH} levels "
                           "(tables, dotted keys, arrays and inline tables)"]


def test_keels_deepest_key_is_far_from_the_limit():
    text = ("wireguard = { enabled = true, address = ['10.7.0.1/24'], peer = [{ public_key = "
            "'HlOu1tgN6jIPCqo/B9y+b7TT1bltyagEMGZGjSZNPVI=', allowed_ips = [ '10.7.0.2/32' ] }] }")
    assert load_text(text).wireguard.peer[0].allowed_ips == ("10.7.0.2/32",)
    assert prescan("a = " + "[" * (MAX_DEPTH - 1) + "]" * (MAX_DEPTH - 1)).problems == []


@pytest.mark.parametrize("text", [
    "a = '" + "[" * 100 + "'\n",
    'a = "' + "{" * 100 + '\\"[[["\n',
    "# " + "[" * 100 + "\n",
    'a = """\n' + "[" * 100 + '\n"""\n',
    "a = '''" + "{" * 100 + "'''\n",
    "a = ['" + "[" * 100 + "', # [[[[\n '{{{{']\n",
    '"[[[[[[" = 1\n',
])
def test_brackets_in_strings_and_comments_are_no_nesting(text):
    assert prescan(text).problems == []
    try:
        load_text(text)
    except ConfigError as err:
        assert all("unknown key" in line for line in err.lines())


@pytest.mark.parametrize(("text", "expected"), [
    ("[wan.shaping]\nupload_kbit = " + "9" * 5000 + "\n", "line 2: an integer of 5000 digits"),
    ("[wireguard]\nprivate_key = " + "9" * 5000 + "\n", "line 2: an integer of 5000 digits"),
    ("[firewall]\nopen_tcp = [22,\n " + "1" * 30 + "]\n", "line 3: an integer of 30 digits"),
    ("a = 0x" + "f_" * 21 + "f\n", "line 1: an integer of 22 digits"),
    ("a = -" + "1" * 21 + "\n", "line 1: an integer of 21 digits"),
])
def test_huge_integers_are_refused_with_their_line(text, expected):
    assert lines(text) == [f"t.toml: {expected} (at most 20)"]


def test_long_numbers_that_are_not_integers_are_left_to_the_schema():
    for text in ("a = 1." + "0" * 40 + "\n", "a = '" + "1" * 40 + "'\n",
                 "a = 1979-05-27 07:32:00\n"):
        assert prescan(text).problems == []
    assert lines("[wan.shaping]\nupload_kbit = 18446744073709551616\n") == [
        "t.toml: wan.shaping.upload_kbit: outside 0-100000000 kbit/s"]


def test_at_most_30_problems_are_shown_then_a_count():
    found = lines("".join(f"k{i} = 1\n" for i in range(100)))
    assert len(found) == MAX_SHOWN + 1
    assert found[0] == "t.toml: k0: unknown key"
    assert found[-1] == "t.toml: and 70 more problems"


def test_a_file_of_many_problems_is_checked_quickly():
    text = "[firewall]\nopen_tcp = [" + "0," * 1000 + "]\n"
    start = time.process_time()
    found = lines(text)
    assert found[-1] == "t.toml: and 970 more problems"
    # past the array's bound, one problem: its elements are not checked one by one
    assert lines("[firewall]\nopen_tcp = [" + "0," * 100_000 + "]\n") == [
        "t.toml: firewall.open_tcp: 100000 elements: at most 1024"]
    assert time.process_time() - start < 10


# --- syntax errors, readable -----------------------------------------------------
@pytest.mark.parametrize(("text", "expected"), [
    ("[lan]\n[lan]\n", "TOML syntax error at line 2, column 5: cannot declare lan twice"),
    ("[wan.shaping]\n[wan.shaping]\n",
     "TOML syntax error at line 2, column 13: cannot declare wan.shaping twice"),
    ("a = {b = 1, b = 2}\n", "TOML syntax error at line 1, column 18: duplicate inline table "
                             "key b"),
    ("[wan]\nmode = 'dhcp'\nx = '''\nabc\n\n\n",
     "TOML syntax error at line 3: a multi-line string opened here is never closed"),
    ('[wan]\nx = """\n\n\n', "TOML syntax error at line 2: a multi-line string opened here is "
                             "never closed"),
    ("a = 1\nb = \n", "TOML syntax error at line 2, column 5: invalid value"),
])
def test_syntax_errors_read_well(text, expected):
    assert lines(text) == [f"t.toml: {expected}"]


def test_no_python_notation_in_a_syntax_error():
    for text in ("[lan]\n[lan]\n", "a.b = 1\na.b = 2\n", "[a]\nb=1\n[a.b]\n", "a = 1\n[a]\n",
                 "x = {a = 1}\n[x]\n", "x = {a = 1}\nx.b = 2\n"):
        for line in lines(text):
            assert "('" not in line and "',)" not in line, line


# --- key names that look like secrets ---------------------------------------------
@pytest.mark.parametrize("name", [SECRET, SECRET[:-1], SECRET.rstrip("=").replace("/", "x"),
                                  "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
                                  "ghp_16C7e42F292c6912E7710c838347Ae178B4a"])
def test_a_secret_used_as_a_key_name_is_never_echoed(name):
    assert looks_secret(name)
    for text in (f"[wan]\n'{name}' = 1\n", f"'{name}' = 1\n", f"[wan]\n\"{name}\".x = 1\n",
                 f"[wireguard]\n'{name}' = {{ a = 1 }}\n", f"[{name}]\n[{name}]\n",
                 f"a = {{ '{name}' = 1, '{name}' = 2 }}\n", f"'{name}' = 1\n'{name}' = 2\n"):
        found = lines(text)
        assert not any(name in line or name[:20] in line for line in found), found
    assert lines(f"[wan]\n'{name}' = 1\n") == ["t.toml: wan.<redacted>: unknown key"]
    (twice,) = lines(f"[wan.'{name}']\n[wan.'{name}']\n")
    assert twice.endswith(": cannot declare wan.<redacted> twice")


def test_the_schemas_key_names_never_look_like_secrets():
    from keel.config.describe import walk

    for info in walk():
        assert not looks_secret(info.name), info.path
    for name in ("persistent_keepalive", "Wireguard_Peer_2", "max_cstate_latency_us",
                 "interface-for-the-lan", "odd key", "download_kbit_2024"):
        assert not looks_secret(name)


def test_a_long_key_name_is_cut_short():
    (line,) = lines(f"[wan]\n{'k' * 5000} = 1\n")
    assert line == f't.toml: wan."{"k" * 32}...": unknown key'


# --- removed keys --------------------------------------------------------------------
def test_a_removed_key_still_loads_with_a_warning_naming_it():
    loaded = parse_config("[wan.shaping]\necn_ingress = true\necn_egress = 'anything'\n"
                          "upload_kbit = 4500\n", "old.toml")
    assert loaded.config.wan.shaping.upload_kbit == 4500
    assert loaded.warning_lines() == [
        "warning: old.toml: wan.shaping.ecn_ingress: removed in this version (CAKE has no ECN "
        "switch), ignored",
        "warning: old.toml: wan.shaping.ecn_egress: removed in this version (CAKE has no ECN "
        "switch), ignored"]


def test_a_removed_key_is_no_longer_written_or_shipped():
    from keel.config.describe import walk

    assert not any("ecn" in info.path for info in walk())
    top = Path(__file__).resolve().parents[3]
    for path in [top / "overlay/etc/keel/keel.toml",
                 *(top / "tui/keel/config/examples").glob("*.toml")]:
        assert "ecn_" not in path.read_text(), path


def test_removed_paths_through_arrays_of_tables():
    data = {"wireguard": {"peer": [{"a": 1, "old": 2}, {"old": 3}, 5]}, "x": {"old": 1}}
    warnings = drop_removed(data, {"wireguard.peer[].old": "gone", "x.y.old": "gone"})
    assert [str(w) for w in warnings] == [
        "wireguard.peer[0].old: removed in this version (gone), ignored",
        "wireguard.peer[1].old: removed in this version (gone), ignored"]
    assert data == {"wireguard": {"peer": [{"a": 1}, {}, 5]}, "x": {"old": 1}}


# --- keel config check / show ------------------------------------------------------
def test_config_check_prints_the_warnings_of_an_old_file_and_passes(tmp_path, capsys):
    path = tmp_path / "old.toml"
    path.write_text(paths.example_text("edge").replace(
        "wash_ingress = true", "wash_ingress = true\necn_ingress = true\necn_egress = false"))
    assert _run(["config", "check", str(path)]) == 0
    assert capsys.readouterr().out.splitlines() == [
        f"warning: {path}: wan.shaping.ecn_ingress: removed in this version (CAKE has no ECN "
        "switch), ignored",
        f"warning: {path}: wan.shaping.ecn_egress: removed in this version (CAKE has no ECN "
        "switch), ignored",
        f"ok: {path}"]
    assert _run(["config", "show", str(path)]) == 0
    captured = capsys.readouterr()
    assert "ecn" not in captured.out and "ecn_ingress" in captured.err


@pytest.mark.parametrize("content", [b"\xff\xfe\x00", b"a = " + b"[" * 500, b"a = 9" * 3000,
                                     b"[wan]\nmode = 1\n" * 100])
def test_config_check_exits_2_on_every_bad_file(tmp_path, capsys, content):
    path = tmp_path / "bad.toml"
    path.write_bytes(content)
    assert _run(["config", "check", str(path)]) == 2
    out = capsys.readouterr().out.splitlines()
    assert out and all(line.startswith(f"{path}: ") for line in out)
    assert len(out) <= MAX_SHOWN + 1


# --- the pre-scan agrees with tomllib on what it lets through ------------------------
def _depth(value: object) -> int:
    """Levels as the pre-scan counts them in an inline document: a key, and
    the bracket or brace of each array or table value."""
    if isinstance(value, dict):
        return 1 + max((1 + _depth(v) for v in value.values()), default=0)
    if isinstance(value, list):
        return 1 + max((_depth(v) for v in value), default=0)
    return 0


small_scalars = st.one_of(st.integers(-(2**63), 2**63 - 1), st.booleans(),
                          st.text(max_size=12), st.floats(allow_nan=False))
nested = st.recursive(small_scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=6), inner, max_size=3)),
    max_leaves=30)


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.text(max_size=8), nested, min_size=1, max_size=4))
def test_the_prescan_passes_valid_toml_within_the_limits(data):
    text = document(data)
    assert tomllib.loads(text) is not None
    deepest = max(1 + _depth(v) for v in data.values())
    found = prescan(text).problems
    assert (found != []) == (deepest > MAX_DEPTH), (deepest, found)
    assert prescan(text).unclosed_string_line is None
