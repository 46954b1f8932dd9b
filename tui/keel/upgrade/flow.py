"""What `keel upgrade FILE|URL` and `keel upgrade rollback` do, without the
command line's printing and asking: the console UI runs the same steps.

    install_bundle(target, progress, say)  check, verify, install, record the trial
    rollback_refusal(status)               why the other slot cannot be booted, or ""
    roll_back()                            the other slot for the next boot

Each raises keel.upgrade.system.UpgradeError (or cli.TargetError for a
target that is no bundle path or URL) with one line for the user; nothing
is written before the bundle's signature and compatible are checked."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from keel.shown import shown
from keel.thresholds import UPGRADE_HANDSHAKE_WAIT_S
from keel.upgrade.record import Pending, check_tunnel_wait
from keel.upgrade.slots import SlotView, UpgradeStatus

Progress = Callable[[int, str], None]
Say = Callable[[str], None]


def _quiet(_: str) -> None:
    pass


def install_bundle(target: str, progress: Progress, say: Say = _quiet,
                   tunnel_wait: int = UPGRADE_HANDSHAKE_WAIT_S) -> Pending:
    """Verify the bundle (signature, compatible), install it into the slot not
    running and record the trial for the gate of its first boot; returns the
    trial. `progress(percent, what)` as RAUC reports it; `say` the steps."""
    from keel.upgrade import system
    from keel.upgrade.cli import check_target
    from keel.upgrade.record import Records
    from keel.version import image_version

    target = check_target(target)
    if "://" not in target and not Path(target).is_file():
        raise system.UpgradeError(f"no bundle at {shown(target)}")
    st = system.read_status()
    other = st.other()
    if st.booted is None or other is None:
        raise system.UpgradeError("cannot tell which slot is running (no rauc.slot= at boot)")
    say(f"checking {shown(target)}: signature and compatible ...")
    info = system.bundle_info(target)
    ours = system.compatible()
    if info.compatible != ours:
        raise system.UpgradeError(f"bundle is for {shown(info.compatible)}, "
                                  f"this router is {ours}: refused, nothing written")
    peers = system.sessions()
    running = image_version()
    say(f"installing keel {shown(info.version)} into slot {other.name} "
        f"(running: {running} in slot {st.booted})")
    system.install(target, progress)
    pending = Pending(st.booted, other.name, running, info.version, peers,
                      tunnel_wait=check_tunnel_wait(tunnel_wait))
    Records().set_pending(pending)
    return pending


def rollback_refusal(status: UpgradeStatus) -> str:
    """Why the other slot cannot be booted again ("" when it can)."""
    other = status.other()
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

