"""`keel upgrade`: install a signed bundle into the other slot, see the slots,
go back to the other slot. Registered by keel.cli through add_upgrade_command.

    keel upgrade FILE|URL [--reboot] [--allow-downgrade]
                                       verify, install into the other slot, reboot
    keel upgrade status [--json]       slots, versions, which booted, the last outcome
    keel upgrade rollback [--reboot]   boot the other slot again
"""

from __future__ import annotations

import argparse
import json
import sys

from keel.shown import shown
from keel.thresholds import UPGRADE_HANDSHAKE_WAIT_RANGE_S, UPGRADE_HANDSHAKE_WAIT_S
from keel.upgrade.target import TargetError, check_target

WORDS = ("status", "rollback", "gate")


def add_upgrade_command(subparsers) -> None:
    p = subparsers.add_parser(
        "upgrade", help="install a signed bundle into the other slot; status; rollback",
        description="keel upgrade FILE|URL installs a signed RAUC bundle into the slot not "
                    "running, then reboots into it; keel keeps the new slot only when the "
                    "router is healthy after its boot. keel upgrade status shows the slots; "
                    "keel upgrade rollback boots the other slot again.")
    p.add_argument("target", metavar="FILE|URL|status|rollback")
    p.add_argument("--reboot", action="store_true", help="reboot without asking")
    p.add_argument("--json", action="store_true", help="status as JSON")
    p.add_argument("--allow-downgrade", action="store_true",
                   help="install a bundle whose keel is older than the running one "
                        "(or whose version cannot be ordered)")
    low, high = UPGRADE_HANDSHAKE_WAIT_RANGE_S
    p.add_argument("--tunnel-wait", type=int, default=UPGRADE_HANDSHAKE_WAIT_S, metavar="S",
                   help=f"seconds the new slot has, from its kernel's start, to bring back "
                        f"every tunnel peer that has a session now ({low} to {high}, default "
                        f"{UPGRADE_HANDSHAKE_WAIT_S}); past them it is rolled back")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from keel.upgrade.system import UpgradeError

    try:
        if args.target == "status":
            return status(args.json)
        if args.target == "rollback":
            return rollback(args.reboot)
        if args.target == "gate":
            from keel.system.console import reboot, say
            from keel.upgrade.gate import run_gate

            return run_gate(say, reboot)
        return upgrade(check_target(args.target), args.reboot, args.tunnel_wait,
                       getattr(args, "allow_downgrade", False))
    except (UpgradeError, TargetError) as err:
        print(f"keel upgrade: {err}", file=sys.stderr)
        return 1


def status(as_json: bool) -> int:
    from keel.upgrade.system import read_status

    st = read_status()
    if as_json:
        print(json.dumps(st.as_dict(), indent=2))
        return 0
    # versions and reasons come from bundles and /data: shown escaped
    for slot in st.slots:
        print(shown(slot.line()))
    if st.installing is not None:
        from keel.upgrade.record import when

        print(shown(f"installing: {st.installing.to_version} into slot "
                    f"{st.installing.to_slot} since {when(st.installing.at)}"))
    if st.pending is not None:
        print(shown(f"pending: {st.pending.to_version} in slot {st.pending.to_slot}, "
                    "kept after its first healthy boot"))
    if st.last is not None:
        print(shown(f"last: {st.last.line()}"))
    if st.problem:
        print(shown(f"problem: {st.problem}"))
    return 0


def _ask(question: str) -> bool:
    if not sys.stdin.isatty():
        return False
    try:
        return input(f"{question} [y/N] ").strip().lower() in ("y", "yes")
    except EOFError:
        return False


class _ProgressPrinter:
    """The install's progress: on a terminal one bar redrawn in place, only
    when its figure or step changes (a serial console is slow); elsewhere a
    line per change. close() ends a bar left open, so what follows (an
    error) starts a line of its own."""

    def __init__(self) -> None:
        self.tty = sys.stdout.isatty()
        self.last: tuple[int, str] | None = None
        self.open = False

    def __call__(self, percent: int, what: str) -> None:
        if (percent, what) == self.last:
            return
        self.last = (percent, what)
        if self.tty:
            bar = "#" * (percent * 30 // 100)
            print(f"\r[{bar:<30}] {percent:3d}% {what[:30]:<30}", end="", flush=True)
            self.open = True
            if percent >= 100:
                self.close()
        else:
            print(f"{percent:3d}% {what}", flush=True)

    def close(self) -> None:
        if self.open:
            print(flush=True)
            self.open = False


def upgrade(target: str, reboot: bool, tunnel_wait: int = UPGRADE_HANDSHAKE_WAIT_S,
            allow_downgrade: bool = False) -> int:
    from keel.upgrade.flow import install_bundle
    from keel.upgrade.record import check_tunnel_wait

    try:
        check_tunnel_wait(tunnel_wait)
    except ValueError as err:
        raise TargetError(f"--tunnel-wait {tunnel_wait}: {err}") from None
    bar = _ProgressPrinter()

    def say(line: str) -> None:
        bar.close()
        print(line, flush=True)

    try:
        pending = install_bundle(target, bar, say, tunnel_wait, allow_downgrade)
    finally:
        bar.close()
    peers = ", ".join(n for _, n in pending.peers) or "no tunnel peers"
    back = f"{peers} to come back within {pending.tunnel_wait} s" if pending.peers else peers
    print(shown(f"installed. The next boot starts slot {pending.to_slot}; keel keeps it once "
                f"the router is healthy ({back}), else boots slot "
                f"{pending.from_slot} again."))
    return _reboot(reboot)


def _reboot(without_asking: bool) -> int:
    if without_asking or _ask("reboot now?"):
        from keel.system.console import reboot

        print("rebooting", flush=True)
        reboot()
    return 0


def rollback(reboot: bool) -> int:
    from keel.upgrade.flow import roll_back

    other = roll_back()
    print(shown(f"the next boot starts slot {other.name} ({other.version})"))
    return _reboot(reboot)
