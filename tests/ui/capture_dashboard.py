"""The dashboard as text, under load: `keel tui --fake`'s collectors on a clock
running `speed` times faster than the wall's (the fake load is a 40 s wave),
polled once a fake second until the wave is `phase` seconds into its rise, with
`seconds` of history before it (the sparklines' and the plot's width).

    python -m tests.ui.capture_dashboard [--size 80x24] [--modern] [--phase 8]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time

from keel.metrics.live import fake_collectors
from keel.ui.profile import CONSOLE, MODERN, Profile

PERIOD = 40.0  # the fake load's wave (keel.system.fake, keel.metrics.latency.FakeProbe)
BASE = 1_800_000_000.0  # a multiple of PERIOD: the wave starts rising at BASE


class FastClock:
    """Fake seconds from `start`, `speed` times the monotonic clock's pace."""

    def __init__(self, start: float, speed: float) -> None:
        self.start, self.speed, self.t0 = start, speed, time.monotonic()

    def __call__(self) -> float:
        return self.start + (time.monotonic() - self.t0) * self.speed


async def capture(profile: Profile = CONSOLE, size: tuple[int, int] = (80, 24),
                  seconds: float = 80.0, phase: float = 8.0, speed: float = 8.0,
                  adaptive: bool = False) -> list[str]:
    from tests.ui.uihelpers import make_app, screen_lines

    clock = FastClock(BASE + phase - seconds, speed)
    collectors = fake_collectors(clock=clock, wallclock=clock, adaptive=adaptive)
    every = dict.fromkeys(("tunnel", "cpu", "cake", "tuning", "latency", "verdict"),
                          1.0 / speed)
    app = make_app(profile, collectors=collectors, intervals=every)
    async with app.run_test(size=size) as pilot:
        while clock() < BASE + phase:
            await asyncio.sleep(0.05)
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()
        return screen_lines(app)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", default="80x24")
    parser.add_argument("--modern", action="store_true", help="the modern profile")
    parser.add_argument("--phase", type=float, default=8.0,
                        help="seconds into the load's rise (peak at 10)")
    parser.add_argument("--seconds", type=float, default=80.0, help="history before it")
    parser.add_argument("--speed", type=float, default=8.0)
    parser.add_argument("--adaptive", action="store_true", help="adaptive CAKE at work")
    args = parser.parse_args(argv)
    cols, rows = (int(v) for v in args.size.split("x"))
    lines = asyncio.run(capture(MODERN if args.modern else CONSOLE, (cols, rows), args.seconds,
                                args.phase, args.speed, args.adaptive))
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
