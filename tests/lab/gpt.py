"""Read a GPT disk image's partition table (for tests on the built image)."""

from __future__ import annotations

import struct
import uuid
from dataclasses import dataclass
from pathlib import Path

SECTOR = 512


@dataclass(frozen=True)
class Partition:
    number: int
    name: str
    type_guid: str
    first_lba: int
    last_lba: int

    @property
    def size(self) -> int:
        return (self.last_lba - self.first_lba + 1) * SECTOR


def read_gpt(path: Path) -> list[Partition]:
    with open(path, "rb") as disk:
        disk.seek(SECTOR)
        header = disk.read(92)
        if header[:8] != b"EFI PART":
            raise ValueError(f"{path}: no GPT header at LBA 1")
        entries_lba, count, entry_size = struct.unpack_from("<QII", header, 72)
        disk.seek(entries_lba * SECTOR)
        table = disk.read(count * entry_size)
    parts = []
    for i in range(count):
        entry = table[i * entry_size:(i + 1) * entry_size]
        type_guid = uuid.UUID(bytes_le=entry[:16])
        if type_guid.int == 0:
            continue
        first, last = struct.unpack_from("<QQ", entry, 32)
        name = entry[56:128].decode("utf-16-le").rstrip("\0")
        parts.append(Partition(i + 1, name, str(type_guid), first, last))
    return parts
