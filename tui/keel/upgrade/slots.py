"""The slots as keel shows them: RAUC's view (`rauc status --output-format=json`),
GRUB's (grubenv) and keel's own records, in one immutable snapshot. The
parsers are pure; keel.upgrade.system reads the real files and commands."""

from __future__ import annotations

import json
from dataclasses import dataclass

from keel.upgrade.grubenv import BootEnv
from keel.upgrade.record import Installing, Outcome, Pending

SLOT_ROOTS = {"A": "rootfs.0", "B": "rootfs.1"}
MAX_JSON = 256 * 1024


class StatusError(ValueError):
    pass


@dataclass(frozen=True)
class SlotView:
    name: str  # A or B
    version: str  # "" when unknown (empty, or never installed by RAUC)
    booted: bool
    # "good", "trying", "new" (installed, not booted yet), "bad", "empty"
    # (never written, or an install into it failed or was cut), "writing"
    state: str
    next_boot: bool

    def line(self) -> str:
        marks = ", ".join(m for m in (("booted" if self.booted else ""),
                                      ("next boot" if self.next_boot else "")) if m)
        version = self.version or "-"
        return f"slot {self.name}: {version:<22} {self.state:<7} {marks}".rstrip()


@dataclass(frozen=True)
class UpgradeStatus:
    booted: str | None
    slots: tuple[SlotView, ...]
    pending: Pending | None
    last: Outcome | None
    problem: str = ""  # why part of the picture is missing (grubenv, rauc)
    installing: Installing | None = None  # an install running now

    def as_dict(self) -> dict:
        return {
            "booted": self.booted,
            "slots": [{"name": s.name, "version": s.version, "booted": s.booted,
                       "state": s.state, "next_boot": s.next_boot} for s in self.slots],
            "pending": None if self.pending is None else {
                "to_slot": self.pending.to_slot, "to_version": self.pending.to_version},
            "last": None if self.last is None else {
                "result": self.last.result, "version": self.last.version,
                "reason": self.last.reason, "line": self.last.line(), "at": self.last.at},
            "problem": self.problem,
            "installing": None if self.installing is None else {
                "to_slot": self.installing.to_slot, "to_version": self.installing.to_version,
                "at": self.installing.at},
        }

    def other(self) -> SlotView | None:
        return next((s for s in self.slots if not s.booted), None)


def parse_rauc_versions(text: str) -> dict[str, str]:
    """Installed bundle version per bootname from `rauc status --detailed
    --output-format=json`; slots RAUC never wrote are absent."""
    if len(text) > MAX_JSON:
        raise StatusError("rauc status printed too much")
    try:
        data = json.loads(text)
    except ValueError as err:
        raise StatusError(f"rauc status is not JSON: {err}") from None
    except RecursionError:
        raise StatusError("rauc status is not JSON: nested too deep") from None
    slots = data.get("slots") if isinstance(data, dict) else None
    if not isinstance(slots, list):
        raise StatusError("rauc status has no slot list")
    out = {}
    for entry in slots:
        if not isinstance(entry, dict) or len(entry) != 1:
            continue
        (info,) = entry.values()
        if not isinstance(info, dict) or not isinstance(info.get("bootname"), str):
            continue
        status = info.get("slot_status") or {}
        bundle = status.get("bundle") if isinstance(status, dict) else None
        version = bundle.get("version") if isinstance(bundle, dict) else None
        if isinstance(version, str) and status.get("status") == "ok":
            out[info["bootname"]] = version[:64]
    return out


def booted_slot(cmdline: str) -> str | None:
    for word in cmdline.split():
        if word.startswith("rauc.slot="):
            slot = word.removeprefix("rauc.slot=")
            return slot if slot in SLOT_ROOTS else None
    return None


def build(booted: str | None, env: BootEnv | None, versions: dict[str, str],
          running_version: str, pending: Pending | None, last: Outcome | None,
          problem: str = "", installing: Installing | None = None) -> UpgradeStatus:
    """`last` is the last outcome with a cut install already turned into one
    (keel.upgrade.record.Installing.cut): a slot whose install failed or was
    cut is "empty" (RAUC marked it bad; what it held before is overwritten)."""
    nxt = env.next_boot() if env else None
    views = []
    for name in SLOT_ROOTS:
        version = running_version if name == booted else versions.get(name, "")
        boot = env.slots[name] if env else None
        broken = (last is not None and last.install_broke and last.slot == name
                  and name != booted)
        if installing is not None and installing.to_slot == name and name != booted:
            version, state = "", "writing"
        elif pending is not None and pending.to_slot == name and name != booted:
            state = "new"
        elif broken:
            version, state = "", "empty"
        elif name == booted and boot is not None and boot.ok:
            state = "good" if boot.tries == 0 else "trying"
        elif boot is None:
            state = "?"
        elif boot.ok:
            state = "good" if boot.tries == 0 else "trying"
        elif version:
            state = "bad"
        else:
            state = "empty"
        views.append(SlotView(name, version, name == booted, state, name == nxt))
    return UpgradeStatus(booted, tuple(views), pending, last, problem, installing)
