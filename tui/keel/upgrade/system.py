"""The upgrade's real side: RAUC's command line (its D-Bus service does the
writing), grubenv on the ESP, /proc/cmdline, the tunnel's sessions. Nothing
here is reached through a shell: argv lists only."""

from __future__ import annotations

import json
import re
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from keel.system.console import cmdline
from keel.thresholds import HANDSHAKE_STALE_S
from keel.upgrade import grubenv, slots
from keel.upgrade.record import Records
from keel.version import image_version

GRUBENV = Path("/boot/EFI/BOOT/grubenv")
SYSTEM_CONF = Path("/etc/rauc/system.conf")
# what RAUC needs of the kernel to open a verity bundle (keel.kernel_features
# lists them; the Debian kernel has them as modules)
MODULES = ("loop", "dm_mod", "dm_verity")
PROGRESS = re.compile(r"^\s*(\d{1,3})% (.*)$")
INSTALL_TIMEOUT = 1800


class UpgradeError(RuntimeError):
    """One line for the user: what was refused or failed, and why."""


def one_line(text: str, limit: int = 200) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[:limit - 3] + "..."


def compatible(conf: Path = SYSTEM_CONF) -> str:
    match = re.search(r"^compatible\s*=\s*(\S+)\s*$", conf.read_text(), re.M)
    if not match:
        raise UpgradeError(f"{conf} names no compatible")
    return match.group(1)


def _run(argv: list[str], timeout: float = 60) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(argv, capture_output=True, text=True, timeout=timeout, check=False)
    except FileNotFoundError:
        raise UpgradeError(f"{argv[0]} is not installed") from None
    except subprocess.TimeoutExpired:
        raise UpgradeError(f"`{' '.join(argv[:3])}` took more than {timeout:.0f} s") from None


# RAUC's informational lines (GLib's g_message), not its answer
NOISE = re.compile(r"^(\(rauc:\d+\): )?rauc[-\w]*[- ](Message|WARNING \*\*):")


def said(text: str) -> str:
    """What RAUC said, less its informational lines: one line."""
    return one_line(" ".join(x for x in text.splitlines() if x.strip() and not NOISE.match(x)))


def rauc(*args: str, timeout: float = 60) -> str:
    proc = _run(["rauc", *args], timeout)
    if proc.returncode != 0:
        raise UpgradeError(f"rauc {args[0]}: {said(proc.stderr + proc.stdout) or 'failed'}")
    return proc.stdout


def last_error() -> str:
    """RAUC's service's LastError (why the last install failed), or ""."""
    proc = _run(["dbus-send", "--system", "--print-reply", "--dest=de.pengutronix.rauc", "/",
                 "org.freedesktop.DBus.Properties.Get", "string:de.pengutronix.rauc.Installer",
                 "string:LastError"], 10)
    match = re.search(r'string "(.*)"', proc.stdout, re.S)
    return one_line(match.group(1)) if proc.returncode == 0 and match else ""


def load_modules() -> None:
    for module in MODULES:
        _run(["modprobe", "-q", module])


@dataclass(frozen=True)
class BundleInfo:
    compatible: str
    version: str


def bundle_info(path: str) -> BundleInfo:
    """The bundle's compatible and version, its signature checked against the
    image's keyring (rauc info refuses a bad signature or a damaged file)."""
    load_modules()
    text = rauc("info", "--output-format=json", path, timeout=300)
    try:
        data = json.loads(text)
        return BundleInfo(str(data["compatible"])[:64], str(data["version"])[:64])
    except (ValueError, KeyError, TypeError):
        raise UpgradeError("rauc info printed no compatible and version") from None


def install(path: str, progress: Callable[[int, str], None]) -> None:
    """`rauc install`, its progress lines passed on; UpgradeError when it fails."""
    load_modules()
    proc = subprocess.Popen(["rauc", "install", path], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    last = []
    assert proc.stdout is not None
    for line in proc.stdout:
        if match := PROGRESS.match(line):
            progress(min(100, int(match.group(1))), one_line(match.group(2), 60))
        elif line.strip():
            last = [*last[-3:], line.strip()]
    if proc.wait(timeout=INSTALL_TIMEOUT) != 0:
        reason = last_error() or said("\n".join(last)) or "no reason given"
        raise UpgradeError(f"rauc install: {reason}")


def mark(state: str, slot: str = "booted") -> None:
    """rauc status mark-good|mark-bad|mark-active booted|other."""
    rauc("status", f"mark-{state}", slot)


def read_env() -> grubenv.BootEnv:
    try:
        return grubenv.parse(GRUBENV.read_bytes())
    except OSError as err:
        raise grubenv.GrubenvError(f"cannot read {GRUBENV}: {err.strerror}") from None


def read_status(records: Records | None = None) -> slots.UpgradeStatus:
    records = records or Records()
    problems = []
    booted = slots.booted_slot(cmdline())
    try:
        env = read_env()
    except grubenv.GrubenvError as err:
        env, problems = None, [str(err)]
    try:
        versions = slots.parse_rauc_versions(
            rauc("status", "--detailed", "--output-format=json", timeout=30))
    except (UpgradeError, slots.StatusError) as err:
        versions = {}
        problems.append(str(err))
    # RAUC knows what it installed; keel what each slot ran (slot A as flashed)
    versions = {**records.versions(), **versions}
    return slots.build(booted, env, versions, image_version(), records.pending(),
                       records.last(), "; ".join(problems))


def sessions(now: float | None = None) -> tuple[tuple[str, str], ...]:
    """Peers with a WireGuard session now: (public key, name to show)."""
    from keel.system.source import SourceError
    from keel.system.wireguard import read_wireguard

    now = time.time() if now is None else now
    try:
        interfaces = read_wireguard()
    except SourceError:
        return ()
    names = peer_names()
    out = []
    for interface in interfaces.values():
        for peer in interface.peers:
            age = peer.handshake_age(now)
            if age is not None and age < HANDSHAKE_STALE_S:
                out.append((peer.public_key, names.get(peer.public_key, peer.public_key[:8])))
    return tuple(out)


def peer_names() -> dict[str, str]:
    from keel.model.reading import InvalidConfig, config_in_force, read_model

    try:
        model = read_model(config_in_force())
    except (InvalidConfig, OSError):
        return {}
    peers = model.wireguard.peer if model.wireguard else ()
    return {p.public_key: p.name for p in peers if p.name}
