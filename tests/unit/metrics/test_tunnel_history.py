"""The tunnel collector keeps its rates for the dashboard's sparklines."""

from __future__ import annotations

from keel.metrics.collectors import TunnelCollector
from keel.system.fake import FakeLiveSource


class Steps:
    def __init__(self, t: float = 1_800_000_000.0, step: float = 1.0) -> None:
        self.t, self.step = t, step

    def __call__(self) -> float:
        self.t += self.step
        return self.t


def test_rates_are_kept_one_a_poll_oldest_first_and_bounded():
    clock = Steps()
    collector = TunnelCollector(FakeLiveSource(clock, clock), clock, clock)
    first = collector.poll()
    assert first.rx_history == () and first.tx_history == ()  # one read: no rate yet
    snaps = [collector.poll() for _ in range(TunnelCollector.RATE_HISTORY + 5)]
    last = snaps[-1]
    assert len(last.rx_history) == len(last.tx_history) == TunnelCollector.RATE_HISTORY
    assert last.rx_history[-1] == sum(i.rx_bps for i in last.interfaces)
    assert last.tx_history[-1] == sum(i.tx_bps for i in last.interfaces)
    assert last.rx_history[:-1] == snaps[-2].rx_history[1:]  # one in, the oldest out
    assert isinstance(last.rx_history, tuple)  # immutable: the UI renders, never edits
    assert min(last.rx_history) > 0
