"""`keel access`: the root password and the SSH keys, kept on /data.

    keel access                      what is set
    keel access password             set root's password (asked twice, never echoed)
    keel access no-password          no root password, on purpose (a console-only box)
    keel access keys                 the SSH keys that may log in (type, fingerprint)
    keel access keys add 'LINE'      add one public key line (as in a .pub file)
    keel access keys remove SHA256:… remove a key added here
"""

from __future__ import annotations

import argparse
import contextlib
import getpass
import sys

from keel.access.password import PasswordStore, RootPassword
from keel.access.ssh_keys import KeyStore, merged

NO_PASSWORD_MEANS = ("no root password: the console's login (and the serial console's) "
                     "lets anyone at it in as root; the UI's shell key stays off; SSH takes "
                     "keys only")


def _status() -> int:
    store = PasswordStore()
    state = store.status()
    if state is RootPassword.SET:
        print("root password: set")
    elif store.skipped():
        print(f"root password: none, on purpose ({NO_PASSWORD_MEANS})")
    else:
        print("root password: not set yet (keel access password)")
    return _keys()


def _keys() -> int:
    from keel.model import InvalidConfig, config_in_force, read_model

    config_keys: tuple[str, ...] = ()
    with contextlib.suppress(InvalidConfig):
        config_keys = read_model(config_in_force()).access.ssh_keys
    store = KeyStore()
    added = store.all()
    print(f"SSH keys ({len(config_keys)} from the config, {len(added)} added here):")
    for key in merged(config_keys, [k.line for k in added]):
        print(f"  {key.describe()}")
    for n, why in store.refused():
        print(f"  refused, not in force: line {n} of {store.path}: {why}")
    return 0


def _password() -> int:
    first = getpass.getpass("new root password: ")
    if not first:
        print("keel access password: empty: nothing changed", file=sys.stderr)
        return 1
    if getpass.getpass("again: ") != first:
        print("keel access password: the two differ: nothing changed", file=sys.stderr)
        return 1
    try:
        PasswordStore().set(first)
    except (OSError, ValueError) as err:
        print(f"keel access password: {err}", file=sys.stderr)
        return 1
    print("root password set (kept in /data/keel/access/shadow)")
    return 0


def _access(args: argparse.Namespace) -> int:
    if args.what is None:
        return _status()
    if args.what == "password":
        return _password()
    if args.what == "no-password":
        PasswordStore().skip()
        print(NO_PASSWORD_MEANS)
        return 0
    if not args.rest:
        return _keys()
    verb, *rest = args.rest
    try:
        if verb == "add" and len(rest) == 1:
            key = KeyStore().add(rest[0])
            print(f"added {key.describe()}; `keel apply` writes it for SSH")
        elif verb == "remove" and len(rest) == 1:
            key = KeyStore().remove(rest[0])
            print(f"removed {key.describe()}; `keel apply` takes it from SSH")
        else:
            print("keel access keys [add 'LINE' | remove SHA256:...]", file=sys.stderr)
            return 2
    except (ValueError, OSError) as err:
        # the parser's reasons escape what they quote (keel.shown) already
        print(f"keel access keys: {err}; nothing changed", file=sys.stderr)
        return 1
    return 0


def add_access_command(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("access", help="the root password and the SSH keys (kept on /data)",
                       description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("what", nargs="?", choices=["password", "no-password", "keys"])
    p.add_argument("rest", nargs="*", help=argparse.SUPPRESS)
    p.set_defaults(func=_access)
