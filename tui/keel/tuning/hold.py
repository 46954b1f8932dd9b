"""python -m keel.tuning.hold MICROSECONDS: hold a CPU latency (PM QoS)
request until killed; started in the background by `keel apply`."""

from __future__ import annotations

import sys

from keel.tuning.cpu import hold_latency_forever

if __name__ == "__main__":
    hold_latency_forever(int(sys.argv[1]))
