"""The health gate: after a boot, is this slot kept?

On a trial boot (the first boot of a newly installed slot) keel keeps the slot
only when all hold: `keel apply --boot` applied the user's config with no
fallback; every peer that had a session before the upgrade has one again
within UPGRADE_HANDSHAKE_WAIT_S (or the install's --tunnel-wait); the console
UI has started on tty1; the stall meter runs. Otherwise the slot is marked
bad and the router reboots into the old one, the reason kept for status,
doctor and the console. A slot that never gets here (its kernel panics or
hangs) is left by GRUB after UPGRADE_BOOT_TRIES boots, and the next boot of
the old slot says so.

On any other boot the booted slot is marked good once the boot's apply has
ended, whatever it applied: an outage of the network is no reason to go back
to an older keel."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from keel.apply.boot import BootRecord
from keel.shown import shown
from keel.thresholds import (
    CONSOLE_UI_TRIES,
    UPGRADE_BOOT_TRIES,
    UPGRADE_HANDSHAKE_WAIT_S,
    UPGRADE_SEEN_S,
    UPGRADE_SLOW_START_PACE,
    UPGRADE_SLOW_START_S,
    UPGRADE_SLOWEST_START_S,
)
from keel.upgrade.record import Outcome, Pending, Records

UI_READY = Path("/run/keel/tty1-ui.ready")
UI_OFF = Path("/data/keel/tty1-off")  # the user's choice: a login on tty1
STALL_PID = Path("/run/keel/stall-meter.pid")
BOOT_APPLY = ("keel", "apply", "--boot")  # its command line (S01preload, S40keel)
LOG = Path("/run/keel/upgrade-gate.log")


@dataclass(frozen=True)
class Observation:
    uptime: float  # seconds since the kernel started
    apply: BootRecord | None  # None: the boot's apply has not ended
    ui_seen: bool  # the console UI has started on tty1 (or the user turned it off)
    stall_running: bool
    sessions: frozenset[str]  # public keys of the peers with a session now
    # the console UI has not drawn yet, and has not failed either (tty1 has
    # not fallen back to a login; it may not be spawned yet, init's start
    # scripts still running): a slow start, it gets until UPGRADE_SLOW_START_S
    ui_starting: bool = False
    # the boot's `keel apply --boot` still runs (slow, not failed: it gets
    # until UPGRADE_SLOW_START_S)
    apply_running: bool = False
    # the console UI's last failed start on tty1 this boot: (exit code, seconds run)
    ui_failure: tuple[int, int] | None = None


@dataclass(frozen=True)
class Verdict:
    decision: str  # "wait", "keep", "roll back"
    reason: str = ""


def judge(obs: Observation, peers: tuple[tuple[str, str], ...],
          tunnel_wait: int = UPGRADE_HANDSHAKE_WAIT_S) -> Verdict:
    """The gate's decision on a trial boot, from what it sees now; the peers
    get `tunnel_wait` seconds from the apply's end to handshake again."""
    late = obs.uptime >= UPGRADE_SEEN_S
    if obs.apply is None:
        limit = UPGRADE_SLOW_START_S if obs.apply_running else UPGRADE_SEEN_S
        return Verdict("roll back", f"keel apply --boot did not end in {limit} s") \
            if obs.uptime >= limit else Verdict("wait")
    if obs.apply.applied is None:
        return Verdict("roll back", "keel apply --boot could apply no config")
    if obs.apply.failures:
        first = obs.apply.failures[0]
        return Verdict("roll back", f"keel apply --boot fell back to {obs.apply.applied}: "
                                    f"{first.source}: {first.reason}")
    if not obs.stall_running:
        return Verdict("roll back", "the stall meter is not running") if late else Verdict("wait")
    if not obs.ui_seen:
        if obs.ui_starting and obs.uptime < ui_start_limit(obs.apply):
            return Verdict("wait")
        return Verdict("roll back", ui_not_started(obs)) if late else Verdict("wait")
    missing = [name for key, name in peers if key not in obs.sessions]
    if missing:
        # (a record from an older keel has no uptime: counted from the boot)
        if obs.uptime - (obs.apply.uptime or 0.0) >= tunnel_wait:
            return Verdict("roll back", f"no handshake with {', '.join(missing)} "
                                        f"in {tunnel_wait} s")
        return Verdict("wait")
    return Verdict("keep")


def ui_start_limit(apply: BootRecord) -> float:
    """The uptime until which a console UI still starting is waited for: the
    slow start's bound, longer on a boot whose apply ended late (the same
    pace for the UI), within UPGRADE_SLOWEST_START_S."""
    paced = UPGRADE_SLOW_START_PACE * (apply.uptime or 0.0)
    return min(UPGRADE_SLOWEST_START_S, max(UPGRADE_SLOW_START_S, paced))


def ui_not_started(obs: Observation) -> str:
    """Why the console UI counts as not started: still not drawn at the slow
    start's bound, or its starts failed (how the last one ended)."""
    reason = "the console UI did not start on tty1"
    if obs.ui_starting and obs.apply is not None:
        return f"{reason}: nothing drawn {ui_start_limit(obs.apply):.0f} s after the boot"
    if obs.ui_failure is None:
        return reason
    code, ran = obs.ui_failure
    ended = f"killed by signal {code - 128}" if code > 128 else f"exit code {code}"
    return f"{reason}: {CONSOLE_UI_TRIES} failed starts, the last ended ({ended}) after {ran} s"


def fell_back(pending: Pending, booted: str, last: Outcome | None) -> Outcome:
    """The outcome to record when a boot finds the trial's slot not booted."""
    if last is not None and last.result == "rolled back" and last.at >= pending.at:
        return last  # the gate on the new slot said why before its reboot
    return Outcome("rolled back", booted, pending.to_version,
                   f"slot {pending.to_slot} did not come up ({UPGRADE_BOOT_TRIES} boots "
                   f"without reaching the health gate: a kernel panic or hang)")


# --- the real side ----------------------------------------------------------

def alive(pidfile: Path) -> bool:
    try:
        os.kill(int(pidfile.read_text().strip()), 0)
    except (OSError, ValueError):
        return False
    return True


def observe() -> Observation:
    from keel.apply.boot import read_record
    from keel.system.console import tty1_gave_up, tty1_last_failure, uptime
    from keel.system.processes import running
    from keel.upgrade.system import sessions

    return Observation(uptime=uptime(), apply=read_record(Path("/run/keel")),
                       ui_seen=UI_READY.exists() or UI_OFF.exists(),
                       stall_running=alive(STALL_PID),
                       sessions=frozenset(key for key, _ in sessions()),
                       ui_starting=not UI_READY.exists() and not tty1_gave_up(CONSOLE_UI_TRIES),
                       apply_running=running(BOOT_APPLY), ui_failure=tty1_last_failure())


def run_gate(say: Callable[[str], None], reboot: Callable[[], None],
             records: Records | None = None, every: float = 2.0) -> int:
    from keel.upgrade import slots, system

    records = records or Records()
    booted = slots.booted_slot(system.cmdline())
    if booted is None:
        say("upgrade gate: no rauc.slot= on the kernel command line; nothing to mark")
        return 1
    from keel.version import image_version

    records.note_version(booted, image_version())
    if cut := system.record_cut(records):  # an install the last boot did not finish
        say(shown(f"keel: {cut.line()}"))
    pending = records.pending()
    if pending is not None and pending.to_slot != booted:
        outcome = fell_back(pending, booted, records.last())
        records.set_last(outcome)
        records.clear_pending()
        system.mark("bad", "other")
        system.mark("active", "booted")
        say(shown(f"keel: {outcome.line()}"))
        return 0
    while True:
        obs = observe()
        if pending is None:
            if obs.apply is not None or obs.uptime >= UPGRADE_SEEN_S:
                system.mark("good", "booted")
                return 0
        else:
            verdict = judge(obs, pending.peers, pending.tunnel_wait)
            if verdict.decision == "keep":
                system.mark("good", "booted")
                outcome = Outcome("kept", booted, pending.to_version)
                records.set_last(outcome)
                records.clear_pending()
                say(shown(f"keel: {outcome.line()}"))
                return 0
            if verdict.decision == "roll back":
                outcome = Outcome("rolled back", pending.from_slot, pending.to_version,
                                  verdict.reason)
                records.set_last(outcome)
                records.clear_pending()
                system.mark("bad", "booted")
                system.mark("active", "other")
                say(shown(f"keel: {outcome.line()}; rebooting into slot {pending.from_slot}"))
                reboot()
                return 0
        time.sleep(every)
