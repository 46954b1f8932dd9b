"""make bench: where the dev image's boot goes, with the previous figures
beside it.

    python -m bench.boot [--boots 2]

Boots one guest of the dev image (2 vCPUs, a WAN with no DHCP server and a
LAN, as a freshly flashed edge), reboots it (a boot with /data's state from
the first), and prints each boot's timeline (`keel doctor --boot`) and its
milestones: the routing one is from the kernel starting to the firewall in,
forwarding on and the LAN served. Beside them: the figures of the previous
`make bench` (out/bench/boot.json) and those measured before the boot was
reworked (bench/boot-before.json). Never fails on speed."""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from tests.lab.lab import Lab
from tests.lab.paths import TOP

BEFORE = Path(__file__).resolve().parent / "boot-before.json"
PREVIOUS = TOP / "out" / "bench" / "boot.json"
MILESTONES = ("firewall", "forwarding", "LAN served", "routing")


def measure(boots: int) -> list[dict]:
    out = []
    with tempfile.TemporaryDirectory(prefix="keel-bench-boot-") as tmp:
        lab = Lab(Path(tmp))
        try:
            g = lab.guest("edge", smp=2)
            lab.link("wan", g)
            lab.link("lan", g)
            for n in range(boots):
                began = time.monotonic()
                if n == 0:
                    g.boot()
                else:
                    g.reboot()
                login = time.monotonic() - began
                report = g.json("keel doctor --boot --json", 60)
                print(f"\n== boot {n + 1} ({'first boot' if n == 0 else 'reboot'}), "
                      f"login on ttyS0 {login:.1f} s after QEMU started (GRUB's 1 s menu "
                      "included)", flush=True)
                print(g.check("keel doctor --boot", 60), flush=True)
                out.append({"login_s": round(login, 1), **report})
        finally:
            lab.close()
    return out


def table(now: list[dict], previous: list[dict] | None, before: dict) -> list[str]:
    def cell(runs: list[dict] | None, i: int, key: str) -> str:
        if not runs or i >= len(runs):
            return "-"
        value = runs[i]["milestones"].get(key) if key != "login" else runs[i]["login_s"]
        return "-" if value is None else f"{value:.1f}"

    lines = ["| boot | milestone (s since the kernel started) | before the rework | "
             "previous make bench | now |", "|---|---|---|---|---|"]
    for i, run in enumerate(now):
        kind = "first boot" if i == 0 else "reboot"
        for key in (*MILESTONES, "login"):
            was = before.get(kind, {}).get(key, "-")
            lines.append(f"| {kind} | {key if key != 'login' else 'login (s since QEMU started)'} "
                         f"| {was} | {cell(previous, i, key)} | {cell(now, i, key)} |")
        slow = sorted(run["steps"], key=lambda s: -s["seconds"])[:4]
        lines.append(f"| {kind} | slowest steps | | | "
                     + ", ".join(f"{s['step']} {s['seconds']:.1f}" for s in slow) + " |")
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--boots", type=int, default=2)
    args = parser.parse_args()
    try:
        previous = json.loads(PREVIOUS.read_text())
    except (OSError, ValueError):
        previous = None
    before = json.loads(BEFORE.read_text())
    now = measure(args.boots)
    print()
    print("\n".join(table(now, previous, before)))
    print(f"\nbefore the rework: {before['how']}")
    PREVIOUS.parent.mkdir(parents=True, exist_ok=True)
    PREVIOUS.write_text(json.dumps(now, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
