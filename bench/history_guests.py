"""make bench: what the history daemon costs an emulated guest, side by side.

    python -m bench.history_guests [--seconds 60]

The bloated-line lab (lan -> edge -> isp -> hub), configured by keel, idle:
each of keel's guests' QEMU process's CPU (the isp, the lab's own router
with keel's daemons stopped, beside them) (user + system, as a share of one host core)
over the same seconds with the history daemon running, then with it stopped
(/etc/init.d/S42history stop), then running again; and the daemon's own
CPU in each guest, from its /proc/PID/stat. The lab's guests are emulated
(TCG): a guest's CPU costs the host many times what it would natively;
`python -m bench.history` has the daemon's own work on this host's CPU.
Writes bench/results/history_guests.md. Figures, never pass/fail."""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

from tests.lab import configs, labs
from tests.lab import topology as topo
from tests.lab.guest import Guest
from tests.lab.lab import Lab

RESULTS = Path(__file__).resolve().parent / "results"
HZ = os.sysconf("SC_CLK_TCK")


def qemu_ticks(guest: Guest) -> int:
    assert guest.child is not None
    fields = Path(f"/proc/{guest.child.pid}/stat").read_text().rpartition(") ")[2].split()
    return int(fields[11]) + int(fields[12])


def daemon_ticks(guest: Guest) -> int | None:
    """utime + stime of the guest's history daemon (None: not running)."""
    out = guest.run("p=/run/keel/history.pid; [ -s $p ] && kill -0 $(cat $p) && "
                    "cut -d' ' -f14,15 /proc/$(cat $p)/stat")
    fields = out.output.split()
    if out.rc != 0 or len(fields) != 2 or not all(f.isdigit() for f in fields):
        return None
    return sum(int(x) for x in fields)


def measure(guests: list[Guest], seconds: int) -> dict[str, tuple[float, float | None]]:
    """Per guest: (its QEMU's share of a host core, its daemon's share of its vCPU)."""
    before = {g.name: (qemu_ticks(g), daemon_ticks(g)) for g in guests}
    t0 = time.monotonic()
    time.sleep(seconds)
    wall = time.monotonic() - t0
    out = {}
    for g in guests:
        q0, d0 = before[g.name]
        d1 = daemon_ticks(g)
        out[g.name] = ((qemu_ticks(g) - q0) / HZ / wall,
                       None if d0 is None or d1 is None else (d1 - d0) / HZ / wall)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=int, default=60, help="per phase")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="keel-bench-") as tmp:
        lab = Lab(Path(tmp))
        try:
            rl = labs.router_lab(lab, labs.BLOATED.define(lab))
            lab.start()
            assert rl.isp and rl.lan
            topo.setup_isp(rl.isp, topo.Bottleneck())
            configs.configure_with_keel(rl, download=0, upload=0)
            # keel's guests (the isp is the lab's own router: its set-up stopped
            # keel's daemons there, so it is measured as it is, for comparison)
            kept = [rl.hub, rl.edge, rl.lan]
            guests = [*kept, rl.isp]
            for g in kept:
                g.until("test -s /run/keel/history/latest.json && echo ok", 120)
            time.sleep(20)  # the apply's and the boot's work done
            phases = [("daemon", measure(guests, args.seconds))]
            for g in kept:
                g.check("/etc/init.d/S42history stop")
            phases.append(("stopped", measure(guests, args.seconds)))
            for g in kept:
                g.check("/etc/init.d/S42history start")
            time.sleep(20)  # its start (Python's imports) left out
            phases.append(("daemon again", measure(guests, args.seconds)))
        finally:
            lab.close()
    lines = ["# The history daemon in the lab's guests (idle, bloated-line lab)", "",
             f"Each guest's QEMU CPU over {args.seconds} s, % of one host core "
             "(the daemon's own CPU in its guest, % of its vCPU):", "",
             "| guest | " + " | ".join(name for name, _ in phases) + " |",
             "|---|" + "---|" * len(phases)]
    for g in ("hub", "edge", "lan", "isp"):
        cells = []
        for _, got in phases:
            qemu, daemon = got[g]
            cells.append(f"{qemu * 100:.1f} %" + ("" if daemon is None
                                                  else f" ({daemon * 100:.1f} %)"))
        lines.append(f"| {g} | " + " | ".join(cells) + " |")
    text = "\n".join(lines) + "\n"
    print(text)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "history_guests.md").write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
