"""The history's own cost on this host's CPU: a simulated day of the daemon's
work, as fast as it goes, then per hour of real time.

  python -m bench.history [--hours H] [--cores N]

- per tick: the point made from an interval (keel.history.sampler, the
  verdicts judged on its ten seconds) with the lab's captured reads;
- per batch: the store's transaction (its 6 points, their rollups, the expiry);
- bytes handed to write() (the WAL and its checkpoints) and the file's size.

The collectors' own reads (tc, wg, /proc) are what the console pays too and
are not in here: `python -m bench.history_guests` (the lab) measures the
whole daemon in a guest. Figures, never pass/fail."""

from __future__ import annotations

import argparse
import resource
import tempfile
from pathlib import Path

from keel.history.daemon import BATCH_S
from keel.history.point import Cake, Core, Latency, Point
from keel.history.sampler import INTERVAL_S, Interval, point_of
from keel.history.store import HistoryStore
from keel.metrics.snapshots import LatencySnapshot, SeriesSnapshot
from keel.parse.ping import LatencySample
from keel.stall.summary import CpuStall, StallSecond

T0 = 1_795_000_000


def cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def written() -> int:
    for line in Path("/proc/self/io").read_text().splitlines():
        if line.startswith("wchar:"):
            return int(line.split()[1])
    return 0


def interval(t: int, cores: int) -> Interval:
    samples = tuple(LatencySample(t - 10 + i / 2, 5.0 + (i * 7919 % 13) / 3) for i in range(20))
    stall = tuple(StallSecond(t - 10 + i + 0.5, tuple(CpuStall(c, 25, 0.4, 1.1, 3.0)
                                                       for c in range(cores)), 0.4, 1.1, 3.0,
                              0.0, True) for i in range(10))
    return Interval(t=t, latency=LatencySnapshot(t, (
        SeriesSnapshot("tunnel", "10.99.0.2", samples, 6.0, 5.0, 0.0),
        SeriesSnapshot("outside", "192.0.2.2", samples, 4.0, 3.0, 0.0))), stall=stall)


def stored_point(t: int, cores: int) -> Point:
    """A point as a loaded 4-core router keeps it (what the store's bytes are of)."""
    return Point(t=t, latency={"tunnel": Latency(5.3, 12.9, 31.4, 0.0, 20),
                               "outside": Latency(3.1, 4.4, 6.0, 0.0, 20)},
                 wan_rx_bps=8_412_331.0, wan_tx_bps=912_004.0, tunnel_rx_bps=8_001_223.0,
                 tunnel_tx_bps=870_112.0,
                 cake={"up": Cake(900, 887_312.0, 3, 0, 1514, True),
                       "down": Cake(9000, 8_731_009.0, 12, 2, 30_280, True)},
                 cores=tuple(Core(0.031, 0.052, 0.118, 0.0) for _ in range(cores)),
                 stall_worst_ms=1.3, tunnel_cpu_cores=0.082, causes={"healthy": 10})


def main() -> int:
    parser = argparse.ArgumentParser(prog="bench.history")
    parser.add_argument("--hours", type=float, default=24.0)
    parser.add_argument("--cores", type=int, default=4)
    args = parser.parse_args()
    ticks = int(args.hours * 360)

    began = cpu()
    history: tuple = ()
    for i in range(min(ticks, 2000)):
        judged = point_of(interval(T0 + 10 * (i + 1), args.cores), history)
        history = judged.signals
    per_tick = (cpu() - began) / min(ticks, 2000)

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "history.db"
        store = HistoryStore(path, clock=lambda: T0)
        began, wrote = cpu(), written()
        size_of_batch = BATCH_S // INTERVAL_S
        batches = ticks // size_of_batch
        for b in range(batches):
            store.write_batch([stored_point(T0 + BATCH_S * b + INTERVAL_S * (i + 1), args.cores)
                               for i in range(size_of_batch)], [])
        per_batch = (cpu() - began) / batches
        bytes_written = written() - wrote
        size = store.size_bytes()
        store.close()

    hour_s = 3600.0
    daemon_cpu = (per_tick * hour_s / INTERVAL_S + per_batch * hour_s / BATCH_S) / hour_s
    per_hour = bytes_written / args.hours
    print(f"history, {args.cores} cores, {args.hours:g} h simulated:")
    print(f"  a point (sampler + verdicts):  {per_tick * 1000:7.2f} ms CPU")
    print(f"  a batch ({BATCH_S // INTERVAL_S} points, rollups): {per_batch * 1000:6.2f} ms CPU")
    print(f"  the daemon's own work:         {daemon_cpu * 100:7.3f} % of a core "
          "(the collectors' reads apart)")
    print(f"  written:                       {per_hour / 1e6:7.2f} MB an hour "
          f"({per_hour * 24 / 1e6:.0f} MB a day)")
    print(f"  the store after {args.hours:g} h:          {size / 1e6:7.2f} MB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
