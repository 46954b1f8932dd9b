"""What `keel upgrade FILE|URL` and `keel upgrade rollback` do, without the
command line's printing and asking: the console UI runs the same steps.

    install_bundle(target, progress, say)  fetch (https), verify, check, install, record
    rollback_refusal(status)               why the other slot cannot be booted, or ""
    roll_back()                            the other slot for the next boot

Each raises keel.upgrade.system.UpgradeError (or
keel.upgrade.target.TargetError for a target that is no bundle path or URL)
with one line for the user; nothing is written to a slot before the
bundle's signature, compatible, version (no older keel unless allowed) and
every byte of its payload are checked.
A URL is fetched once onto /data; every step after works on that file."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from keel.shown import shown
from keel.thresholds import UPGRADE_HANDSHAKE_WAIT_S
from keel.upgrade.record import Pending, check_tunnel_wait
from keel.upgrade.slots import SlotView, UpgradeStatus

Progress = Callable[[int, str], None]
Say = Callable[[str], None]
# asked before an older keel is installed: the question, True to go on
Ask = Callable[[str], bool]
# the bar: the payload's check (one read of it) takes this much, the write the rest
CHECK_SHARE = 50


def _quiet(_: str) -> None:
    pass


def _never(_: str) -> bool:
    return False


def install_bundle(target: str, progress: Progress, say: Say = _quiet,
                   tunnel_wait: int = UPGRADE_HANDSHAKE_WAIT_S,
                   allow_downgrade: bool | Ask = False) -> Pending:
    """Fetch the bundle (an https URL, once, onto /data), verify it (signature,
    compatible), refuse an older keel unless `allow_downgrade` (True, or asked
    and answered yes), check every byte of its payload, install it into the
    slot not running and record the trial for the gate of its first boot;
    returns the trial. The install is recorded while it runs and its failure
    after (keel.upgrade.record). `progress(percent, what)`: the check, then
    the bytes written; `say` the steps."""
    from keel.upgrade import fetch, system
    from keel.upgrade.target import check_target

    target = check_target(target)
    if "://" in target:
        say(f"fetching {shown(target)} ...")
        path = str(fetch.fetch(target, fetch.DOWNLOAD, progress))
        try:
            return _install(path, progress, say, tunnel_wait, allow_downgrade)
        finally:
            Path(path).unlink(missing_ok=True)
    if not Path(target).is_file():
        raise system.UpgradeError(f"no bundle at {shown(target)}")
    return _install(target, progress, say, tunnel_wait, allow_downgrade)


def downgrade_refusal(bundle: str, running: str) -> str:
    """Why keel `bundle` is not installed over `running` without being
    allowed ("" when it is not older)."""
    from keel.version import is_older

    older = is_older(bundle, running)
    if older is None:
        return (f"cannot tell whether keel {bundle} is older than the running {running}: "
                "refused, nothing written (--allow-downgrade installs it)")
    if older:
        return (f"the bundle holds keel {bundle}, older than the running {running}: "
                "refused, nothing written (--allow-downgrade installs it)")
    return ""


def _install(path: str, progress: Progress, say: Say, tunnel_wait: int,
             allow_downgrade: bool | Ask) -> Pending:
    from keel.upgrade import system
    from keel.upgrade.record import INSTALL_FAILED, Installing, Outcome, Records
    from keel.version import image_version

    st = system.read_status()
    other = st.other()
    if st.booted is None or other is None:
        raise system.UpgradeError("cannot tell which slot is running (no rauc.slot= at boot)")
    say(f"checking {shown(path)}: signature and compatible ...")
    info = system.bundle_info(path)
    ours = system.compatible()
    if info.compatible != ours:
        raise system.UpgradeError(f"bundle is for {shown(info.compatible)}, "
                                  f"this router is {ours}: refused, nothing written")
    running = image_version()
    if why := downgrade_refusal(info.version, running):
        ask = allow_downgrade if callable(allow_downgrade) else None
        if not (allow_downgrade is True or (ask is not None and ask(
                f"install an older keel? The bundle holds {info.version}; "
                f"this router runs {running}."))):
            raise system.UpgradeError(shown(why))
    say("checking every byte of the bundle against its signature ...")
    total = system.check_payload(path, lambda p, what: progress(p * CHECK_SHARE // 100, what))
    peers = system.sessions()
    say(f"installing keel {shown(info.version)} into slot {other.name} "
        f"(running: {running} in slot {st.booted})")
    records = Records()
    records.clear_pending()  # the slot of an earlier trial is written over now
    records.set_installing(Installing(st.booted, other.name, info.version, system.boot_id(),
                                      os.getpid()))
    devices = system.slot_devices(other.name)
    try:
        system.install(path, lambda p, what: progress(
                           CHECK_SHARE + p * (100 - CHECK_SHARE) // 100, what),
                       lambda: system.bytes_written(devices), total)
    except system.UpgradeError as err:
        records.set_last(Outcome(INSTALL_FAILED, other.name, info.version, str(err)))
        records.clear_installing()
        raise
    pending = Pending(st.booted, other.name, running, info.version, peers,
                      tunnel_wait=check_tunnel_wait(tunnel_wait))
    records.set_pending(pending)
    records.clear_installing()
    return pending


def rollback_refusal(status: UpgradeStatus) -> str:
    """Why the other slot cannot be booted again ("" when it can)."""
    other = status.other()
    last = status.last
    if (other is not None and last is not None and last.install_broke
            and last.slot == other.name):
        return f"the {last.line()}; install a bundle instead"
    if other is not None and other.state == "writing":
        return f"slot {other.name} is being written by an install now"
    if other is None or not other.version:
        return "the other slot holds no keel to roll back to"
    if other.state == "bad":
        return (f"slot {other.name} ({other.version}) was rolled back "
                "as unhealthy; install a bundle instead")
    return ""


def roll_back() -> SlotView:
    """The other slot for the next boot (RAUC marks it active), the trial
    forgotten, the rollback recorded: the slot that boots next."""
    from keel.upgrade import system
    from keel.upgrade.record import Outcome, Records

    st = system.read_status()
    if why := rollback_refusal(st):
        raise system.UpgradeError(why)
    other = st.other()
    assert other is not None  # rollback_refusal said so
    system.mark("active", "other")
    records = Records()
    records.clear_pending()
    records.set_last(Outcome("rollback", other.name, other.version))
    return other

