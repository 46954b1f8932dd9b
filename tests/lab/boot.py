"""Boot one keel guest from the dev image with its serial console on this
terminal (Ctrl-a x quits QEMU). Nothing is written to the built image."""

from __future__ import annotations

import argparse
import os
import subprocess
import tempfile
from pathlib import Path

from tests.lab import accel as accel_mod
from tests.lab.guest import Guest


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.lab", description=__doc__)
    parser.add_argument("--uefi", action="store_true", help="boot by OVMF instead of SeaBIOS")
    parser.add_argument("--disk-size", default="2G", help="size of the guest's disk")
    args = parser.parse_args(argv)
    accel = accel_mod.detect()
    print(f"keel: booting the dev image ({accel.name}: {accel.reason}); Ctrl-a x quits")
    with tempfile.TemporaryDirectory(prefix="keel-boot-") as tmp:
        guest = Guest("keel", Path(tmp), firmware="uefi" if args.uefi else "bios",
                      disk_size=args.disk_size, accel=accel)
        subprocess.run(["qemu-img", "create", "-q", "-f", "qcow2", "-b", str(guest.image),
                        "-F", "qcow2", str(guest.overlay), args.disk_size], check=True)
        argv_q = [a if a != "stdio,id=con0,signal=off" else "stdio,id=con0,mux=on,signal=off"
                  for a in guest.qemu_argv()]
        argv_q[argv_q.index("-monitor") + 1] = "chardev:con0"
        return subprocess.call(argv_q, env=os.environ)
