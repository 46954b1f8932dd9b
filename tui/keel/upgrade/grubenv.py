"""grubenv: the 1024-byte block GRUB and RAUC share (ORDER, A_OK, A_TRY, ...).
A pure parser of its text; keel only reads it (RAUC writes it through
grub-editenv)."""

from __future__ import annotations

from dataclasses import dataclass

from keel.thresholds import UPGRADE_BOOT_TRIES

SIZE = 1024
HEADER = "# GRUB Environment Block"
SLOTS = ("A", "B")


class GrubenvError(ValueError):
    pass


@dataclass(frozen=True)
class SlotBoot:
    name: str
    ok: bool  # X_OK=1: GRUB may boot it
    tries: int  # X_TRY: boots counted since it was last marked good

    @property
    def good(self) -> bool:
        """RAUC's meaning: OK=1 and no try pending."""
        return self.ok and self.tries == 0

    @property
    def bootable(self) -> bool:
        """GRUB would still try it."""
        return self.ok and self.tries < UPGRADE_BOOT_TRIES


@dataclass(frozen=True)
class BootEnv:
    order: tuple[str, ...]
    slots: dict[str, SlotBoot]

    def next_boot(self) -> str | None:
        """The slot GRUB boots next (grub.cfg.in's choice), None if none is left."""
        for name in self.order:
            slot = self.slots.get(name)
            if slot is not None and slot.bootable:
                return name
        return None


def parse(data: bytes) -> BootEnv:
    """The slots' boot state from grubenv's bytes; GrubenvError names what is wrong."""
    if len(data) != SIZE:
        raise GrubenvError(f"grubenv is {len(data)} bytes, not {SIZE}")
    try:
        text = data.decode("ascii")
    except UnicodeDecodeError as err:
        raise GrubenvError(f"grubenv: a byte that is not ASCII at offset {err.start}") from None
    lines = text.split("\n")
    if lines[0] != HEADER:
        raise GrubenvError("grubenv does not start with GRUB's header")
    values: dict[str, str] = {}
    for n, line in enumerate(lines[1:], start=2):
        if not line or line.startswith("#"):
            continue  # GRUB's padding, and comments (Debian's grub-editenv writes one)
        key, sep, value = line.partition("=")
        if not sep or not key.replace("_", "").isalnum():
            raise GrubenvError(f"grubenv line {n}: not KEY=VALUE")
        values[key] = value
    order = tuple(values.get("ORDER", "").split())
    if not order or any(name not in SLOTS for name in order):
        raise GrubenvError(f"grubenv: ORDER is {values.get('ORDER', '')!r}, not slots "
                           f"among {' '.join(SLOTS)}")
    slots = {}
    for name in SLOTS:
        ok, tries = values.get(f"{name}_OK", "0"), values.get(f"{name}_TRY", "0")
        if ok not in ("0", "1") or not tries.isdigit() or len(tries) > 3:
            raise GrubenvError(f"grubenv: {name}_OK={ok!r} {name}_TRY={tries!r} are not numbers")
        slots[name] = SlotBoot(name, ok == "1", int(tries))
    return BootEnv(order, slots)
