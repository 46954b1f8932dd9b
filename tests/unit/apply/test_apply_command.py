"""`keel apply` and `--dry-run` read through the one reading path: every bad
file is exit 2 with one clear message (nothing changed), a BOM is fine, a
removed key warns; `--boot` runs the fallback chain."""

from __future__ import annotations

from pathlib import Path

import pytest

from keel.apply import command
from keel.config import paths
from tests.unit.apply.fake_router import fake_router

EDGE = paths.example_text("edge").split("[wireguard]")[0].replace('attach = "tunnel"',
                                                                   'attach = "wan"')


@pytest.mark.parametrize(("content", "reason"), [
    (b"[system]\nhostname = '\xe9'\n", "not UTF-8 text: byte 0xe9 at line 2, column 13"),
    (b"a = " + b"{b = " * 200 + b"1" + b"}" * 200, "line 1: nested deeper than 32 levels"),
    (b"[wan.shaping]\nupload_kbit = " + b"1" * 4400 + b"\n", "line 2: an integer of 4400"),
    (b"[lan]\n[lan]\n", "TOML syntax error at line 2, column 5: cannot declare lan twice"),
    (b"[lan]\ndhcp_lease = '0'\n", "lan.dhcp_lease: shorter than 2 minutes"),
])
@pytest.mark.parametrize("dry_run", [True, False])
def test_a_bad_file_is_exit_2_and_changes_nothing(tmp_path, capsys, content, reason, dry_run):
    path = tmp_path / "bad.toml"
    path.write_bytes(content)
    with fake_router(EDGE) as router:
        rc = command.cmd_apply(path, dry_run=dry_run, confirm=None, boot=False)
        assert rc == 2
        assert router.runner.ran == []
        assert not router.user.exists()
    err = capsys.readouterr().err
    assert err.startswith(f"keel apply: {path} is invalid, nothing changed:\n{path}: {reason}")
    assert "Traceback" not in err


def test_dev_zero_is_exit_2_at_once(capsys):
    with fake_router(EDGE):
        assert command.cmd_apply(Path("/dev/zero"), dry_run=True, confirm=None, boot=False) == 2
    assert "/dev/zero: larger than 1 MiB" in capsys.readouterr().err


def test_a_bom_is_accepted_and_the_users_copy_is_written_without_it(tmp_path, capsys):
    path = tmp_path / "bom.toml"
    path.write_bytes(b"\xef\xbb\xbf" + EDGE.encode())
    with fake_router(EDGE) as router:
        assert command.cmd_apply(path, dry_run=False, confirm=None, boot=False) == 0
        assert router.user.read_text() == EDGE
        assert router.revisions.current().text() == EDGE
    assert "recorded revision 1" in capsys.readouterr().out


def test_an_old_file_applies_with_the_warning_in_the_output(tmp_path, capsys):
    path = tmp_path / "old.toml"
    path.write_text(EDGE.replace("nat = true", "nat = true\necn_egress = false"))
    with fake_router(EDGE):
        assert command.cmd_apply(path, dry_run=True, confirm=None, boot=False) == 0
    out = capsys.readouterr().out
    assert (f"warning: {path}: wan.shaping.ecn_egress: removed in this version (CAKE has no "
            "ECN switch), ignored") in out.splitlines()


def test_the_system_refusing_is_exit_1(tmp_path, capsys):
    path = tmp_path / "edge.toml"
    path.write_text(EDGE)
    with fake_router(EDGE, fails=lambda argv: argv[:2] == ["nft", "-c"]) as router:
        assert command.cmd_apply(path, dry_run=False, confirm=None, boot=False) == 1
        assert not router.user.exists()
    assert "firewall: nft -c refused the ruleset, nothing changed" in capsys.readouterr().out


def test_boot_from_the_command_line(capsys):
    with fake_router(EDGE) as router:
        router.user.write_bytes(b"\x00\xff")
        assert command.cmd_apply(None, dry_run=False, confirm=None, boot=True) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith(f"keel: {router.user} failed: ")
    assert out[-1] == f"keel: applied {router.default} (fallback; `keel doctor` says why)"


def test_rollback_reads_the_revision_through_the_same_path(capsys):
    with fake_router(EDGE) as router:
        router.revisions.record(EDGE, "first")
        router.revisions.record(EDGE.replace('"edge"', '"two"'), "second")
        (router.revisions.root / "0001.toml").write_bytes(b"\xe9")
        assert command.cmd_rollback(1) == 2
    assert "revision 1: not UTF-8 text" in capsys.readouterr().err


def test_boot_started_early_waits_for_the_word_then_applies(tmp_path, capsys):
    """S01preload starts `keel apply --boot --when-told FLAG` before /data and
    the NICs are up: it changes nothing until S40keel makes the flag."""
    import threading
    import time as time_

    from keel.boot import timeline

    flag = tmp_path / "boot.go"
    with fake_router(EDGE) as router:
        ran_before: list[int] = []

        def tell() -> None:
            time_.sleep(0.3)
            ran_before.append(len(router.runner.ran))
            flag.touch()

        teller = threading.Thread(target=tell)
        teller.start()
        rc = command.cmd_apply(None, dry_run=False, confirm=None, boot=True,
                               when_told=flag, started_at=1.0)
        teller.join()
        assert rc == 0 and ran_before == [0]  # not one command before the word
        marks = timeline.read(router.run_dir / "boot.jsonl")
        log = (router.run_dir / "boot-apply.log").read_text()
    steps = [m.step for m in marks]
    assert steps[:2] == ["keel apply --boot: python, imports",
                         "keel apply --boot: ready, until S40keel"]
    assert marks[0].start == 1.0 and marks[1].seconds >= 0.2
    assert any(s.startswith("apply firewall: load") for s in steps)
    assert f"keel: applied {router.default}" in log


def test_the_boots_apply_imports_no_other_command() -> None:
    """`keel apply --boot` (S01preload) parses its own arguments and loads
    none of the other commands' modules: Python's start is most of the boot's
    apply under emulation."""
    import subprocess
    import sys

    code = ("import sys, keel.cli, keel.apply.command as c\n"
            "seen = {}\n"
            "c.cmd_apply = lambda path, **kw: seen.update(kw) or 0\n"
            "argv = ['apply', '--boot', '--when-told', '/x', '--started-at', '1.5']\n"
            "assert keel.cli.main(argv) == 0\n"
            "assert seen['boot'] and str(seen['when_told']) == '/x' and seen['started_at'] == 1.5\n"
            "print(sorted(m for m in sys.modules if m.startswith(('keel.doctor', 'keel.ui', "
            "'keel.selftest.cli', 'keel.pair', 'keel.access.cli', 'keel.config.cli'))))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=Path(__file__).parents[3] / "tui").stdout
    assert out.strip() == "[]"


def test_a_dry_run_before_the_first_key_shows_the_tunnel_and_makes_no_key(tmp_path, capsys):
    """No WireGuard key yet (a router before its first boot's apply): the dry
    run reads none and makes none; it shows the tunnel's step."""
    path = tmp_path / "edge.toml"
    path.write_text(paths.example_text("edge"))  # with its tunnel
    with fake_router(EDGE) as router:
        assert command.cmd_apply(path, dry_run=True, confirm=None, boot=False) == 0
        assert not router.key_path.exists() and router.runner.ran[:1] != [["wg", "genkey"]]
    out = capsys.readouterr().out
    assert "wireguard" in out and "Traceback" not in out
