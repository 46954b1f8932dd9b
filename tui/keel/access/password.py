"""The root password, kept on /data (the root filesystem is read-only): the
shadow file /data/keel/access/shadow, bind-mounted over /etc/shadow at boot
(S04access) and again each time it changes, so BusyBox's login and the UI's
shell key check the same hash. Or, on a console-only box, a recorded choice to
have none."""

from __future__ import annotations

import os
from enum import Enum
from pathlib import Path

from keel.shown import shown
from keel.system.crypt import Hasher, login_checks, new_hash
from keel.system.mounts import bind_file

ACCESS_DIR = Path("/data/keel/access")
ETC_SHADOW = Path("/etc/shadow")
SKIPPED = "no-password"  # the file that records "no root password, on purpose"
# S04access's note when it left root locked (/data missing, a bad shadow file)
LOCKED_NOTE = Path("/run/keel/access-locked")


class RootPassword(Enum):
    SET = "set"
    EMPTY = "empty"  # no password: no shell until one is set
    LOCKED = "locked"  # '!' or '*': no password login possible
    UNREADABLE = "unreadable"


def shadow_entry(text: str, user: str = "root") -> str | None:
    for line in text.splitlines():
        fields = line.split(":")
        if len(fields) >= 2 and fields[0] == user:
            return fields[1]
    return None


def status_of(shadow_text: str | None) -> RootPassword:
    field = shadow_entry(shadow_text) if shadow_text is not None else None
    if field is None:
        return RootPassword.UNREADABLE
    if field == "":
        return RootPassword.EMPTY
    if field.startswith(("!", "*")):
        return RootPassword.LOCKED
    return RootPassword.SET


def with_root_hash(shadow_text: str, hashed: str) -> str:
    """The shadow file with root's hash replaced (every other line kept)."""
    lines, done = [], False
    for line in shadow_text.splitlines():
        fields = line.split(":")
        if fields[0] == "root" and len(fields) >= 2 and not done:
            fields[1] = hashed
            line, done = ":".join(fields), True
        lines.append(line)
    if not done:
        lines.insert(0, f"root:{hashed}:19000:0:99999:7:::")
    return "\n".join(lines) + "\n"


class PasswordStore:
    """The root password on /data, and its bind mount over /etc/shadow."""

    def __init__(self, directory: Path = ACCESS_DIR, etc_shadow: Path = ETC_SHADOW,
                 mount: bool = True, locked_note: Path = LOCKED_NOTE) -> None:
        self.directory, self.etc_shadow, self.mount = directory, etc_shadow, mount
        self.locked_note = locked_note

    def locked_reason(self) -> str | None:
        """Why the boot left root locked (S04access), one line, or None."""
        try:
            text = self.locked_note.read_text(errors="replace").strip()
        except OSError:
            return None
        return shown(text.splitlines()[0], 200) if text else None

    @property
    def shadow(self) -> Path:
        return self.directory / "shadow"

    def status(self) -> RootPassword:
        for path in (self.shadow, self.etc_shadow):
            try:
                return status_of(path.read_text(encoding="utf-8"))
            except OSError:
                continue
        return RootPassword.UNREADABLE

    def root_hash(self) -> str | None:
        for path in (self.shadow, self.etc_shadow):
            try:
                return shadow_entry(path.read_text(encoding="utf-8"))
            except OSError:
                continue
        return None

    def needs_rehash(self) -> bool:
        """A password is set, in a scheme the console's login cannot check
        (yescrypt, from an earlier keel): only typing it again fixes that."""
        hashed = self.root_hash()
        return (hashed is not None and status_of(f"root:{hashed}:") is RootPassword.SET
                and not login_checks(hashed))

    def skipped(self) -> bool:
        return (self.directory / SKIPPED).exists()

    def needs_asking(self) -> bool:
        """First boot: no password yet and no recorded choice to have none."""
        return self.status() is RootPassword.EMPTY and not self.skipped()

    def skip(self) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        (self.directory / SKIPPED).write_text("the console logs in without a password\n")

    def set(self, password: str, hasher: Hasher | None = None) -> None:
        """Hash and keep the password; the hash reaches /etc/shadow at once.
        Nothing of the password itself is written or logged."""
        hashed = new_hash(password, hasher)
        try:
            base = self.shadow.read_text(encoding="utf-8")
        except OSError:
            base = self.etc_shadow.read_text(encoding="utf-8")
        self.directory.mkdir(parents=True, exist_ok=True)
        os.chmod(self.directory, 0o700)
        tmp = self.directory / ".shadow.new"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(with_root_hash(base, hashed))
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, self.shadow)
        (self.directory / SKIPPED).unlink(missing_ok=True)
        if self.mount:
            bind_file(self.shadow, self.etc_shadow)
