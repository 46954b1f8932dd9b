"""make demo: boot the lab (lan client, edge, hub), configure edge and hub with
`keel apply`, bring the tunnel up, and open the edge's console UI on this
terminal. Quit the UI with q; Ctrl-] leaves the console and stops the lab.

    python -m tests.lab.demo [--shell]
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from pathlib import Path

from tests.lab import topology as topo
from tests.lab.configs import configure_with_keel
from tests.lab.lab import Lab


def say(text: str) -> None:
    print(f"demo: {text}", flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--shell", action="store_true",
                        help="give the edge's shell instead of starting the UI")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="keel-demo-") as tmp:
        lab = Lab(Path(tmp))
        try:
            say(f"booting lan, edge and hub ({lab.accel.name}: {lab.accel.reason}) ...")
            rl = topo.build(lab, lan=True)
            lab.start()
            edge = rl.edge
            say("configuring hub and edge with keel apply, waiting for the tunnel ...")
            configure_with_keel(rl)
            # some traffic through the tunnel to look at, from the LAN client
            rl.lan.check(f"(ping -n -i 0.5 {topo.BEHIND_HUB} > /dev/null 2>&1 &)")
            cols, rows = shutil.get_terminal_size((80, 24))
            edge.check(f"stty rows {rows} cols {cols}")
            say("the edge's console follows; q quits the UI, Ctrl-] stops the demo")
            child = edge.child
            assert child is not None
            child.logfile_read = None
            term = os.environ.get("TERM", "vt220")
            child.sendline(f"export TERM={term}" + ("" if args.shell else "; exec keel tui"))
            child.interact(escape_character="\x1d")
        finally:
            lab.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
