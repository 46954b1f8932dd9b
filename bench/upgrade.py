"""make bench: how long an upgrade takes, from `keel upgrade` to the tunnel
back on the new slot, split into its parts; and the bundle's size.

    python -m bench.upgrade [--smp N]

An edge (1 vCPU unless --smp says more, the console UI on tty1 as shipped) with a tunnel to its hub,
a bundle with a new version (tests/lab/bundles.py, `make bundle`'s way) on a
second disk. Verify is `rauc info` (the signature and the verity hash tree's
root), install is the rest of `keel upgrade`; the reboot is from the command
to the new kernel's start (init stopping, firmware, GRUB's 1 s menu); then
the new slot's boot timeline (`keel doctor --boot`): the boot's apply ended,
the first WireGuard handshake. Goal: reboot to tunnel up at most 30 s under
emulation. Never fails on speed."""

from __future__ import annotations

import argparse
import re
import tempfile
import time
from pathlib import Path

from tests.lab import bundles
from tests.lab import topology as topo
from tests.lab.configs import configure_with_keel
from tests.lab.lab import Lab

MOUNT = "mkdir -p /tmp/b && (mountpoint -q /tmp/b || mount -o ro /dev/vdb /tmp/b)"
GOAL_S = 30.0


def timed(fn) -> float:
    began = time.monotonic()
    fn()
    return time.monotonic() - began


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.upgrade")
    parser.add_argument("--smp", type=int, default=1, help="the edge's vCPUs (default 1)")
    smp = parser.parse_args().smp
    with tempfile.TemporaryDirectory(prefix="keel-bench-upgrade-") as tmp:
        print("making the bundles (tests/lab/bundles.py) ...", flush=True)
        made = bundles.make(Path(tmp) / "bundles")
        size = (Path(tmp) / "bundles" / "bundles" / "good.raucb").stat().st_size
        lab = Lab(Path(tmp) / "lab")
        try:
            edge = lab.guest("edge", smp=smp, tty1_ui=True, drives=(made.disk,))
            hub = lab.guest("hub", smp=1)
            lab.link("core", edge, hub)
            lab.link("lan", edge)
            lab.start()
            configure_with_keel(topo.RouterLab(lab, edge, hub))
            edge.check("keel access no-password")
            edge.check(MOUNT)
            print("verifying and installing ...", flush=True)
            verify = timed(lambda: edge.check("rauc info /tmp/b/good.raucb >/dev/null", 300))
            total = timed(lambda: edge.check("keel upgrade /tmp/b/good.raucb </dev/null", 600))
            console = edge.console
            began = time.monotonic()
            console.child.sendline("reboot")
            edge.wait_for_login(160)
            up = float(edge.check("cut -d' ' -f1 /proc/uptime"))
            kernel_at = time.monotonic() - up - began  # the new kernel's start
            slot = re.search(r"rauc\.slot=(\S+)", edge.check("cat /proc/cmdline")).group(1)
            edge.until("grep -q 'first handshake' /run/keel/boot.jsonl", 120)
            marks = edge.json("keel doctor --boot --json", 60)
            steps = {s["step"]: s for s in marks["steps"]}
            apply_end = max((s["end"] for name, s in steps.items() if name.startswith("S40")),
                            default=None)
            handshake = steps.get("tunnel: first handshake", {}).get("end")
            kept = edge.until("keel upgrade status --json | grep -q '\"result\": \"kept\"' "
                              "&& echo kept", 240, every=3)
        finally:
            lab.close()
    print(f"\nupgrade to {made.new_version} on an edge of {smp} vCPU (slot {slot}, "
          f"{kept.strip().splitlines()[-1]}); bundle {size / 1e6:.0f} MB")
    rows = [("verify (rauc info)", verify), ("install (keel upgrade - verify)", total - verify),
            ("reboot: command -> new kernel", kernel_at),
            ("boot: kernel -> S40keel's apply ended", apply_end),
            ("boot: kernel -> first handshake", handshake)]
    print("| part | seconds |\n|---|---|")
    for name, value in rows:
        print(f"| {name} | {'-' if value is None else f'{value:.1f}'} |")
    if handshake is not None:
        back = kernel_at + handshake
        print(f"\nreboot -> tunnel up: {back:.1f} s (goal <= {GOAL_S:.0f} s: "
              f"{'met' if back <= GOAL_S else 'NOT met'}); keel upgrade -> tunnel up: "
              f"{total + back:.1f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
