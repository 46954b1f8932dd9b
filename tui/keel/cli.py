"""The `keel` command: one entry point for the router's tools.

    keel apply [FILE] [--dry-run] [--confirm SECONDS]   apply the config
    keel confirm                                         keep what --confirm applied
    keel rollback [N]                                    re-apply revision N (default: the previous)
    keel show pubkey|revisions|ports                     the key, revisions, NICs
    keel doctor [--json]                                 what is really in force
    keel forwards [--json] | add NAME ... | remove NAME  port forwards
    keel config check|example ...                        the config file
    keel access [password|no-password|keys ...]          root password, SSH keys
    keel selftest throughput|bufferbloat|mtu             against the WireGuard peer
    keel metrics-serve [--listen ADDR]... [--port N]     metrics for Prometheus (a daemon)
    keel stall-meter                                     how late the CPU comes back (a daemon)
    keel tui                                             the console UI
    keel upgrade FILE|URL|status|rollback                signed A/B upgrades (RAUC)
"""

from __future__ import annotations

import argparse
import sys
from importlib import import_module
from pathlib import Path

from keel.version import image_version


def _apply(args: argparse.Namespace) -> int:
    from keel.apply.command import cmd_apply

    return cmd_apply(args.file, dry_run=args.dry_run, confirm=args.confirm, boot=args.boot,
                     note=args.note, when_told=args.when_told, started_at=args.started_at)


def _confirm(args: argparse.Namespace) -> int:
    from keel.apply.command import cmd_confirm

    return cmd_confirm()


def _confirm_watch(args: argparse.Namespace) -> int:
    from keel.apply.command import cmd_confirm_watch

    return cmd_confirm_watch()


def _rollback(args: argparse.Namespace) -> int:
    from keel.apply.command import cmd_rollback

    return cmd_rollback(args.revision)


def _show(args: argparse.Namespace) -> int:
    if args.what == "pubkey":
        from keel.system.commands import CommandError
        from keel.wireguard import keys

        try:
            print(keys.public_key())
        except (OSError, CommandError, keys.KeyFileError) as err:
            print(f"keel show pubkey: {err}", file=sys.stderr)
            return 1
        return 0
    if args.what == "ports":
        return _show_ports()
    from keel.state.revisions import RevisionStore

    store = RevisionStore()
    current = store.current()
    for rev in store.list():
        mark = "*" if current and rev.number == current.number else " "
        print(f"{mark} {rev.number:4d}  {rev.note}")
    return 0


def _show_ports() -> int:
    """Each role's NIC (the config's name, the kernel name it resolved to
    now) and every port with its driver, identity and link."""
    from keel.model import InvalidConfig, config_in_force, read_model
    from keel.system.nic_ports import read_ports, resolve_in_force

    try:
        resolution = resolve_in_force(read_model(config_in_force()))
    except InvalidConfig as err:
        print(f"keel show ports: the config in force is invalid:\n{err}", file=sys.stderr)
        resolution = None
    if resolution is not None:
        for role in resolution.roles:
            print(role.line())
        if resolution.refused:
            print(f"keel apply refuses this: {resolution.refused}")
        print()
    print(f"{'port':<16} {'driver':<12} {'mac':<17} {'identity':<22} link")
    for p in read_ports():
        print(f"{p.name:<16} {p.driver or '-':<12} {p.mac or '-':<17} "
              f"{p.identity or '-':<22} {p.link}")
    return 0 if resolution is not None else 2


def _positive_seconds(text: str) -> int:
    value = int(text)
    if not 10 <= value <= 3600:
        raise argparse.ArgumentTypeError("confirm time must be 10..3600 seconds")
    return value


# The sub-commands with modules of their own: each command's name -> the module
# and the function that registers it. A command line loads only the module of
# the command it names (each module's imports are a second or more of CPU
# under emulation, on every `keel` run: the boot's stall meter and upgrade
# gate, the console UI); help and an unknown command load them all. A module
# that cannot be imported is a broken install: its ImportError stops `keel`
# loudly (it must never turn `keel doctor` into "invalid choice"). Registering
# imports no Textual: keel.ui.cli loads it only to run the UI.
COMMANDS: dict[str, tuple[str, str]] = {
    "access": ("keel.access.cli", "add_access_command"),
    "config": ("keel.config.cli", "add_config_commands"),
    "doctor": ("keel.doctor.cli", "add_doctor_command"),
    "fleet": ("keel.fleet.cli", "add_fleet_command"),
    "forwards": ("keel.forwards.cli", "add_forwards_command"),
    "history": ("keel.history.cli", "add_history_command"),
    "metrics-serve": ("keel.metrics.cli", "register"),
    "pair": ("keel.pair.cli", "add_pair_commands"),
    "peers": ("keel.pair.cli", "add_pair_commands"),
    "selftest": ("keel.selftest.cli", "add_selftest_commands"),
    "stall-meter": ("keel.stall.cli", "register"),
    "tui": ("keel.ui.cli", "add_tui_command"),
    "upgrade": ("keel.upgrade.cli", "add_upgrade_command"),
}
# registered here, with no module to load
BUILT_IN = ("apply", "confirm", "confirm-watch", "rollback", "show")


def modules_for(words: list[str]) -> list[tuple[str, str]]:
    """The (module, function) pairs a command line needs registered, once each
    and in COMMANDS' order: its command's alone, none for a built-in one or
    for no command at all (`keel --version`), every one for help (`keel`,
    `keel --help`: it lists them) and for a word that is no command (the
    error lists them too). keel's own options take no value, so the command
    is the first word that is no option."""
    everything = list(dict.fromkeys(COMMANDS.values()))
    if not words:
        return everything
    for word in words:
        if word in ("-h", "--help"):
            return everything
        if not word.startswith("-"):
            if word in BUILT_IN:
                return []
            return [COMMANDS[word]] if word in COMMANDS else everything
    return []


def build_parser(modules: list[tuple[str, str]] | None = None) -> argparse.ArgumentParser:
    """keel's parser with the built-in commands and those `modules` register
    (modules_for: just enough for one command line); every one by default."""
    parser = argparse.ArgumentParser(prog="keel", description="keel router appliance",
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog=__doc__.split("\n\n", 1)[1])
    parser.add_argument("--version", action="version", version=f"keel {image_version()}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    _apply_arguments(sub.add_parser("apply", help="validate, check and apply the config"))

    sub.add_parser("confirm", help="keep what `apply --confirm` applied").set_defaults(
        func=_confirm)
    sub.add_parser("confirm-watch").set_defaults(func=_confirm_watch)

    p = sub.add_parser("rollback", help="re-apply an earlier revision")
    p.add_argument("revision", nargs="?", type=int)
    p.set_defaults(func=_rollback)

    p = sub.add_parser("show", help="the public key, the config revisions, the NICs")
    p.add_argument("what", choices=["pubkey", "revisions", "ports"])
    p.set_defaults(func=_show)

    if modules is None:
        modules = list(dict.fromkeys(COMMANDS.values()))
    for module, add in modules:
        getattr(import_module(module), add)(sub)
    return parser


def _apply_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", nargs="?", type=Path,
                   help="config file (default: /data/keel/keel.toml, else /etc/keel/keel.toml)")
    p.add_argument("--dry-run", action="store_true", help="print what would change")
    p.add_argument("--confirm", type=_positive_seconds, metavar="SECONDS",
                   help="roll back unless `keel confirm` follows in time")
    p.add_argument("--boot", action="store_true", help=argparse.SUPPRESS)
    # (S01preload: start early, apply at boot once this file exists)
    p.add_argument("--when-told", type=Path, help=argparse.SUPPRESS)
    p.add_argument("--started-at", type=float, help=argparse.SUPPRESS)
    p.add_argument("--note", default="apply", metavar="TEXT",
                   help="what this revision is (keel show revisions)")
    p.set_defaults(func=_apply)


def main(argv: list[str] | None = None) -> int:
    words = sys.argv[1:] if argv is None else argv
    if words[:2] == ["apply", "--boot"]:
        # the boot's own path (S01preload, S40keel): apply's parser alone, none
        # of the other commands' imports (most of a second under emulation)
        boot_parser = argparse.ArgumentParser(prog="keel apply")
        _apply_arguments(boot_parser)
        return _apply(boot_parser.parse_args(words[1:]))
    parser = build_parser(modules_for(list(words)))
    args = parser.parse_args(words)
    if not getattr(args, "func", None):
        parser.print_help()
        return 0
    return int(args.func(args) or 0)


if __name__ == "__main__":
    sys.exit(main())
