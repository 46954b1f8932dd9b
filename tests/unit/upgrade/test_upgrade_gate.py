"""The health gate's decision on a trial boot (keep, roll back, wait), one
rule at a time, and the outcome recorded when the trial's slot never came up."""

from __future__ import annotations

import pytest

from keel.apply.boot import BootRecord, Failure
from keel.thresholds import (
    UPGRADE_BOOT_TRIES,
    UPGRADE_HANDSHAKE_WAIT_S,
    UPGRADE_SEEN_S,
    UPGRADE_SLOW_START_S,
)
from keel.upgrade.gate import Observation, Verdict, fell_back, judge
from keel.upgrade.record import Outcome, Pending

USER = "/data/keel/keel.toml"
HUB = ("hQ2m1X0Z+hubpublickey000000000000000000000000=", "hub")
SITE = ("sT4b0Y9W+sitepublickey00000000000000000000000=", "site-b")
APPLIED = BootRecord(USER, at=5.0)


def seen(uptime: float = 30.0, apply: BootRecord | None = APPLIED, ui_seen: bool = True,
         stall_running: bool = True, sessions: tuple[str, ...] = (HUB[0],),
         ui_starting: bool = False, apply_running: bool = False,
         ui_failure: tuple[int, int] | None = None) -> Observation:
    """A healthy trial boot at `uptime`, but for what the test changes."""
    return Observation(uptime=uptime, apply=apply, ui_seen=ui_seen,
                       stall_running=stall_running, sessions=frozenset(sessions),
                       ui_starting=ui_starting, apply_running=apply_running,
                       ui_failure=ui_failure)


def test_thresholds_as_documented() -> None:
    """grub.cfg.in and the gate's messages name these figures."""
    assert (UPGRADE_SEEN_S, UPGRADE_HANDSHAKE_WAIT_S, UPGRADE_BOOT_TRIES) == (120, 180, 3)
    assert UPGRADE_SEEN_S < UPGRADE_HANDSHAKE_WAIT_S


# --- each rule ----------------------------------------------------------------------
def test_all_healthy_is_kept() -> None:
    assert judge(seen(), (HUB,)) == Verdict("keep")


def test_no_peers_before_the_upgrade_is_kept_at_once() -> None:
    assert judge(seen(uptime=8.0, sessions=()), ()) == Verdict("keep")


def test_apply_not_ended_waits_then_rolls_back() -> None:
    assert judge(seen(uptime=UPGRADE_SEEN_S - 0.1, apply=None), (HUB,)) == Verdict("wait")
    assert judge(seen(uptime=UPGRADE_SEEN_S, apply=None), (HUB,)) == Verdict(
        "roll back", "keel apply --boot did not end in 120 s")


def test_an_apply_still_running_gets_longer_and_then_rolls_back() -> None:
    """Its process alive, no record yet (a throttled CPU: S40keel let the
    boot go on at 100 s): no rollback at UPGRADE_SEEN_S, one at
    UPGRADE_SLOW_START_S, which the reason names."""
    slow = {"apply": None, "apply_running": True}
    assert judge(seen(uptime=UPGRADE_SEEN_S + 60, **slow), (HUB,)) == Verdict("wait")
    assert judge(seen(uptime=UPGRADE_SLOW_START_S, **slow), (HUB,)) == Verdict(
        "roll back", f"keel apply --boot did not end in {UPGRADE_SLOW_START_S} s")


def test_the_handshake_window_counts_from_the_applys_end() -> None:
    """The tunnel is set up by the apply: a slow apply that ended at 150 s
    leaves the peers their whole 180 s from there, not 30."""
    late = BootRecord(USER, at=5.0, uptime=150.0)
    assert judge(seen(uptime=329.5, apply=late, sessions=()), (HUB,)) == Verdict("wait")
    assert judge(seen(uptime=330.0, apply=late, sessions=()), (HUB,)) == Verdict(
        "roll back", "no handshake with hub in 180 s")
    assert judge(seen(uptime=329.5, apply=late), (HUB,)) == Verdict("keep")


def test_apply_could_apply_nothing() -> None:
    record = BootRecord(None, (Failure(USER, "TOML syntax error at line 1"),
                               Failure("/etc/keel/keel.toml", "wan.mode: must be one of")))
    verdict = judge(seen(uptime=3.0, apply=record), (HUB,))
    assert verdict == Verdict("roll back", "keel apply --boot could apply no config")


def test_apply_fell_back_names_the_failed_source() -> None:
    record = BootRecord("revision 7", (Failure(USER, "TOML syntax error at line 1"),))
    verdict = judge(seen(uptime=3.0, apply=record), (HUB,))
    assert verdict == Verdict("roll back", "keel apply --boot fell back to revision 7: "
                                           f"{USER}: TOML syntax error at line 1")


def test_apply_fell_back_twice_names_the_first() -> None:
    record = BootRecord("/etc/keel/keel.toml", (Failure(USER, "not UTF-8 text"),
                                                Failure("revision 7", "larger than 1 MiB")))
    verdict = judge(seen(apply=record), (HUB,))
    assert verdict.decision == "roll back"
    assert verdict.reason == (f"keel apply --boot fell back to /etc/keel/keel.toml: "
                              f"{USER}: not UTF-8 text")


def test_stall_meter_waits_then_rolls_back() -> None:
    assert judge(seen(uptime=60.0, stall_running=False), (HUB,)) == Verdict("wait")
    assert judge(seen(uptime=UPGRADE_SEEN_S, stall_running=False), (HUB,)) == Verdict(
        "roll back", "the stall meter is not running")


def test_console_ui_waits_then_rolls_back() -> None:
    assert judge(seen(uptime=60.0, ui_seen=False), (HUB,)) == Verdict("wait")
    assert judge(seen(uptime=UPGRADE_SEEN_S + 30, ui_seen=False), (HUB,)) == Verdict(
        "roll back", "the console UI did not start on tty1")


def test_a_console_ui_still_starting_gets_longer_and_then_rolls_back() -> None:
    """Nothing drawn yet, but no failure either (a throttled CPU, or init's
    start scripts still running): no rollback at UPGRADE_SEEN_S, one at
    UPGRADE_SLOW_START_S."""
    slow = {"ui_seen": False, "ui_starting": True}
    assert judge(seen(uptime=UPGRADE_SEEN_S + 30, **slow), (HUB,)) == Verdict("wait")
    assert judge(seen(uptime=UPGRADE_SLOW_START_S, **slow), (HUB,)) == Verdict(
        "roll back", "the console UI did not start on tty1: nothing drawn 600 s after the boot")


def test_a_console_ui_on_a_boot_slow_all_through_gets_the_boots_pace() -> None:
    """The apply ended at 250 s (a starved CPU): the UI still starting is
    waited for until 4 x 250 s, not 600 s; never past 1800 s."""
    late = {"ui_seen": False, "ui_starting": True, "apply": BootRecord(USER, uptime=250.0)}
    assert judge(seen(uptime=UPGRADE_SLOW_START_S + 300, **late), (HUB,)) == Verdict("wait")
    assert judge(seen(uptime=1000.0, **late), (HUB,)) == Verdict(
        "roll back", "the console UI did not start on tty1: nothing drawn 1000 s after the boot")
    slowest = {**late, "apply": BootRecord(USER, uptime=900.0)}
    assert judge(seen(uptime=1799.0, **slowest), (HUB,)) == Verdict("wait")
    assert judge(seen(uptime=1800.0, **slowest), (HUB,)).decision == "roll back"
    quick = {**late, "apply": BootRecord(USER, uptime=20.0)}
    assert judge(seen(uptime=UPGRADE_SLOW_START_S, **quick), (HUB,)).decision == "roll back"


@pytest.mark.parametrize(("failure", "said"), [
    ((1, 4), "the last ended (exit code 1) after 4 s"),
    ((137, 12), "the last ended (killed by signal 9) after 12 s"),
])
def test_a_console_ui_that_failed_says_how_its_last_start_ended(failure, said) -> None:
    """tty1 fell back to a login: the reason names the failed starts and how
    the last one ended (/usr/share/keel/tty1 notes it), so a rollback for the
    UI can be told from a slow machine."""
    verdict = judge(seen(uptime=UPGRADE_SEEN_S, ui_seen=False, ui_failure=failure), (HUB,))
    assert verdict == Verdict("roll back", f"the console UI did not start on tty1: "
                                           f"3 failed starts, {said}")


def test_missing_peer_waits_for_the_handshake_window() -> None:
    for uptime in (10.0, UPGRADE_SEEN_S, UPGRADE_HANDSHAKE_WAIT_S - 0.5):
        assert judge(seen(uptime=uptime, sessions=()), (HUB,)) == Verdict("wait"), uptime
    assert judge(seen(uptime=UPGRADE_HANDSHAKE_WAIT_S, sessions=()), (HUB,)) == Verdict(
        "roll back", "no handshake with hub in 180 s")


def test_missing_peers_are_all_named() -> None:
    verdict = judge(seen(uptime=400.0, sessions=()), (HUB, SITE))
    assert verdict == Verdict("roll back", "no handshake with hub, site-b in 180 s")
    verdict = judge(seen(uptime=400.0, sessions=(HUB[0],)), (HUB, SITE))
    assert verdict == Verdict("roll back", "no handshake with site-b in 180 s")


def test_peer_back_in_time_is_kept() -> None:
    assert judge(seen(uptime=UPGRADE_HANDSHAKE_WAIT_S - 1, sessions=(HUB[0], SITE[0])),
                 (HUB, SITE)) == Verdict("keep")


def test_new_peers_do_not_count() -> None:
    """Only the peers with a session before the upgrade are waited for."""
    assert judge(seen(sessions=(HUB[0], "someone-else=")), (HUB,)) == Verdict("keep")


# --- which rule speaks first --------------------------------------------------------
@pytest.mark.parametrize(("obs", "reason"), [
    (seen(uptime=500.0, apply=None, ui_seen=False, stall_running=False, sessions=()),
     "keel apply --boot did not end in 120 s"),
    (seen(uptime=500.0, apply=BootRecord(None), ui_seen=False, stall_running=False,
          sessions=()),
     "keel apply --boot could apply no config"),
    (seen(uptime=500.0, apply=BootRecord("revision 2", (Failure(USER, "bad"),)),
          ui_seen=False, stall_running=False, sessions=()),
     f"keel apply --boot fell back to revision 2: {USER}: bad"),
    (seen(uptime=500.0, ui_seen=False, stall_running=False, sessions=()),
     "the stall meter is not running"),
    (seen(uptime=500.0, ui_seen=False, sessions=()), "the console UI did not start on tty1"),
    (seen(uptime=500.0, sessions=()), "no handshake with hub in 180 s"),
])
def test_first_failing_rule_gives_the_reason(obs: Observation, reason: str) -> None:
    assert judge(obs, (HUB,)) == Verdict("roll back", reason)


def test_a_failed_apply_does_not_wait() -> None:
    """A fallback is final: no reason to wait for anything else."""
    obs = seen(uptime=1.0, apply=BootRecord("revision 2", (Failure(USER, "bad"),)),
               ui_seen=False, stall_running=False, sessions=())
    assert judge(obs, (HUB,)).decision == "roll back"


# --- fell_back: the trial's slot did not boot ----------------------------------------
PENDING = Pending("A", "B", "0.1.0", "0.4.0", (HUB,), at=1000.0)
SPENT = ("slot B did not come up (3 boots without reaching the health gate: "
         "a kernel panic or hang)")


def test_gate_reason_is_kept_when_newer_than_the_trial() -> None:
    said = Outcome("rolled back", "A", "0.4.0", "no handshake with hub in 180 s", at=1300.0)
    assert fell_back(PENDING, "A", said) is said


def test_gate_reason_at_the_same_second_is_kept() -> None:
    said = Outcome("rolled back", "A", "0.4.0", "the stall meter is not running", at=1000.0)
    assert fell_back(PENDING, "A", said) is said


@pytest.mark.parametrize("last", [
    None,
    Outcome("rolled back", "A", "0.3.0", "no handshake with hub in 180 s", at=900.0),
    Outcome("kept", "B", "0.3.0", at=1300.0),
    Outcome("rollback", "A", "0.1.0", at=1300.0),
], ids=["no record", "older rollback", "kept", "user rollback"])
def test_otherwise_the_three_boots_are_named(last: Outcome | None) -> None:
    outcome = fell_back(PENDING, "A", last)
    assert (outcome.result, outcome.slot, outcome.version, outcome.reason) == (
        "rolled back", "A", "0.4.0", SPENT)
    assert outcome.line() == f"upgrade to 0.4.0 rolled back: {SPENT}"
    assert outcome.at >= PENDING.at


def test_the_install_may_give_the_peers_another_wait() -> None:
    assert judge(seen(uptime=59.5, sessions=()), (HUB,), tunnel_wait=60) == Verdict("wait")
    assert judge(seen(uptime=60.0, sessions=()), (HUB,), tunnel_wait=60) == Verdict(
        "roll back", "no handshake with hub in 60 s")
    assert judge(seen(uptime=600.0, sessions=()), (HUB,), tunnel_wait=900) == Verdict("wait")


def test_a_console_ui_has_failed_once_tty1_gave_up_to_a_login(tmp_path) -> None:
    """keel.system.console.tty1_gave_up reads the count /usr/share/keel/tty1
    keeps, and the gate's CONSOLE_UI_TRIES is the script's own figure: no
    count yet (tty1 not spawned, the UI starting) or fewer failures is no
    verdict; CONSOLE_UI_TRIES failures in a row are."""
    import re

    from keel.system.console import tty1_gave_up
    from keel.thresholds import CONSOLE_UI_TRIES
    from tests.lab.paths import TOP

    script = (TOP / "overlay" / "usr" / "share" / "keel" / "tty1").read_text()
    assert re.search(r'\[ "\$n" -ge (\d+) \]', script).group(1) == str(CONSOLE_UI_TRIES)
    count = tmp_path / "tty1-failures"
    assert not tty1_gave_up(CONSOLE_UI_TRIES, count)
    for n, gave_up in ((0, False), (CONSOLE_UI_TRIES - 1, False), (CONSOLE_UI_TRIES, True)):
        count.write_text(f"{n}\n")
        assert tty1_gave_up(CONSOLE_UI_TRIES, count) is gave_up, n
    count.write_text("garbage")
    assert not tty1_gave_up(CONSOLE_UI_TRIES, count)


def test_the_boot_apply_is_found_by_its_command_line(tmp_path) -> None:
    """keel.system.processes.running on a made /proc: S01preload's
    `keel apply --boot --when-told ...` (through python3) counts; a
    `keel apply` by hand, or another program's --boot, does not."""
    from keel.system.processes import running
    from keel.upgrade.gate import BOOT_APPLY

    def proc(pid: int, argv: list[str]) -> None:
        d = tmp_path / str(pid)
        d.mkdir()
        (d / "cmdline").write_bytes(b"\0".join(a.encode() for a in argv) + b"\0")
        (d / "stat").write_text(f"{pid} (keel) S 1 {pid} {pid} 0 -1 4194560 "
                                "1202 0 0 0 410 95 0 0 20 0 3 0 2893 1 2 0 0\n")

    proc(301, ["/usr/bin/python3", "/usr/bin/keel", "apply", "/tmp/edge.toml"])
    proc(302, ["/sbin/udhcpc", "apply", "--boot"])
    (tmp_path / "303").mkdir()  # a process that ended while /proc was read
    assert not running(BOOT_APPLY, tmp_path)
    proc(304, ["/usr/bin/python3", "/usr/bin/keel", "apply", "--boot", "--when-told",
               "/run/keel/boot.go", "--started-at", "3.21"])
    assert running(BOOT_APPLY, tmp_path)


def test_the_last_failed_start_is_read_as_the_tty1_script_notes_it(tmp_path) -> None:
    """/usr/share/keel/tty1 notes "exit code, seconds run" of a failed start
    in the file keel.system.console reads; anything else is no note."""
    from keel.system.console import TTY1_LAST_FAILURE, tty1_last_failure
    from tests.lab.paths import TOP

    script = (TOP / "overlay" / "usr" / "share" / "keel" / "tty1").read_text()
    assert f"LAST={TTY1_LAST_FAILURE}" in script
    assert 'echo "$rc $((end - start))" >"$LAST"' in script
    note = tmp_path / "tty1-last-failure"
    assert tty1_last_failure(note) is None
    note.write_text("137 12\n")
    assert tty1_last_failure(note) == (137, 12)
    for bad in ("", "1", "x 2", "1 2 3"):
        note.write_text(bad)
        assert tty1_last_failure(note) is None, bad
