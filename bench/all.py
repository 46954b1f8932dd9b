"""make bench: every benchmark, one after the other, each in its own process;
one that fails is named at the end and the others still run and print.

    python -m bench.all
"""

from __future__ import annotations

import subprocess
import sys
import time

# (module, arguments): the lab scenarios, where CAKE sits, adaptive CAKE, the starving VPS,
# the boot, an upgrade, the history's own cost, the hub's cost per edge, the console UI's own cost
BENCHES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("bench.run", ()),
    ("bench.cake_placement", ()),
    ("bench.adaptive", ()),
    ("bench.ack_filter", ()),
    ("bench.starving", ()),
    ("bench.boot", ()),
    ("bench.upgrade", ()),
    ("bench.history", ()),
    ("bench.history_guests", ()),
    ("bench.fleet", ()),
    ("tests.ui.bench_ui", ("--seconds", "60")),
)


def main() -> int:
    failed = []
    for module, args in BENCHES:
        print(f"\n===== {module} {' '.join(args)}", flush=True)
        began = time.monotonic()
        rc = subprocess.run([sys.executable, "-m", module, *args], check=False).returncode
        took = time.monotonic() - began
        print(f"===== {module}: {'done' if rc == 0 else f'FAILED (exit {rc})'} "
              f"in {took / 60:.1f} min", flush=True)
        if rc != 0:
            failed.append(f"{module} (exit {rc})")
    if failed:
        print(f"\nmake bench: these stopped before their end: {', '.join(failed)}; "
              "the others' figures are above")
        return 1
    print("\nmake bench: every benchmark ran to its end")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
