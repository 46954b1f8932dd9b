"""make demo: boot the lab (lan client, edge, isp with a bloated 4/1.5 Mbit/s
line, hub) with edge and hub unconfigured, as freshly flashed, and hand
this terminal to their consoles: first the hub's, then the edge's. Each
starts the console UI, whose setup wizard comes up by itself (no user
config yet); the hub shows a pairing code, the edge takes it. Ctrl-] moves
on from the hub to the edge, and from the edge ends the demo.

    python -m tests.lab.demo [--configured] [--shell]

--configured sets both up with `keel apply` instead (the tunnel up, the
LAN client pinging through it) and opens the edge's UI.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import threading
from pathlib import Path

import pexpect

from tests.lab import labs
from tests.lab import topology as topo
from tests.lab.configs import configure_with_keel
from tests.lab.guest import Guest
from tests.lab.lab import Lab

HUB_SHEET = f"""
  THE HUB (the VPS end). First root's password (or [esc] for none), then
  its setup wizard:
    role         hub
    NIC          eth0 is the WAN
    WAN          static: address {topo.HUB_WAN}/24, gateway {topo.ISP_CORE}
    tunnel       pair (the tunnel address and port as given)
    shaping      off
  review [y], keep [y], [enter]: the hub shows an 8-digit code.
  Note the code, then Ctrl-] to go to the edge (the hub waits 10 min).
"""
EDGE_SHEET = f"""
  THE EDGE (the box at home). Root's password, then its setup wizard:
    role         edge
    NICs         eth0 the WAN (to the isp), eth1 the LAN (the lan client)
    WAN          static: address {topo.EDGE_WAN_VIA_ISP}/24, gateway {topo.ISP_UP}
    LAN          as given (192.168.77.1/24, DHCP .100-.199)
    tunnel       pair: the hub's address {topo.HUB_WAN} and its code
    shaping      measure: the throughput self-test; [a] applies its rates,
                 [k] keeps them
  Then [s] on the dashboard, [c] compare: the bufferbloat test with CAKE
  bypassed, then in place. Ctrl-] ends the demo.
"""


def say(text: str) -> None:
    print(f"demo: {text}", flush=True)


def _drain(child: pexpect.spawn, stop: threading.Event) -> None:
    """Keep reading a console nobody looks at, so its guest never blocks on
    a full serial line (the hub's UI goes on drawing while it waits)."""
    while not stop.is_set():
        try:
            child.read_nonblocking(65536, timeout=0.5)
        except pexpect.TIMEOUT:
            continue
        except (pexpect.EOF, OSError, ValueError):
            return


def _terminal_back() -> None:
    """This terminal as it was before a console UI took it: the main screen,
    the cursor shown, plain attributes, cleared."""
    sys.stdout.write("\x1b[?1049l\x1b[?25h\x1b[?1000l\x1b[0m\x1b[2J\x1b[H")
    sys.stdout.flush()


def _console(guest: Guest, command: str) -> None:
    """This terminal on the guest's serial console until Ctrl-]."""
    cols, rows = shutil.get_terminal_size((80, 24))
    guest.check(f"stty rows {rows} cols {cols}")
    child = guest.child
    assert child is not None
    child.logfile_read = None
    term = os.environ.get("TERM", "vt220")
    child.sendline(f"export TERM={term}" + (f"; {command}" if command else ""))
    child.interact(escape_character="\x1d")
    _terminal_back()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--configured", action="store_true",
                        help="set edge and hub up with keel apply; open the edge's UI")
    parser.add_argument("--shell", action="store_true",
                        help="give the consoles' shells instead of starting the UI")
    args = parser.parse_args(argv)
    ui = "" if args.shell else "keel tui"
    with tempfile.TemporaryDirectory(prefix="keel-demo-") as tmp:
        lab = Lab(Path(tmp))
        try:
            say(f"booting lan, edge, isp and hub ({lab.accel.name}: {lab.accel.reason}) ...")
            rl = labs.router_lab(lab, labs.BLOATED.define(lab))  # its guests and wires
            lab.start()
            say("the isp: a 4/1.5 Mbit/s line with a 500 ms FIFO (bloated) ...")
            topo.setup_isp(rl.isp)
            if args.configured:
                say("configuring hub and edge with keel apply, waiting for the tunnel ...")
                configure_with_keel(rl)
                rl.lan.check(f"(ping -n -i 0.5 {topo.BEHIND_HUB} > /dev/null 2>&1 &)")
                say("the edge's console follows; q quits the UI, Ctrl-] stops the demo")
                _console(rl.edge, ui and f"exec {ui}")
                return 0
            for guest in (rl.hub, rl.edge):
                # the lab answered root's password question for its tests: ask it again
                guest.check("rm -f /data/keel/access/no-password")
            print(HUB_SHEET, flush=True)
            input("demo: [enter] opens the hub's console ")
            _console(rl.hub, ui)
            stop = threading.Event()
            assert rl.hub.child is not None
            drain = threading.Thread(target=_drain, args=(rl.hub.child, stop), daemon=True)
            drain.start()
            print(EDGE_SHEET, flush=True)
            input("demo: [enter] opens the edge's console ")
            _console(rl.edge, ui)
            stop.set()
            drain.join(2)
        finally:
            lab.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
