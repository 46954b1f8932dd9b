"""The base of the screens that poll the collectors while shown (the
dashboard, the verdicts, the self-test)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any, ClassVar, cast

from rich.text import Text
from textual.screen import Screen
from textual.timer import Timer

from keel.metrics.snapshots import LatencySnapshot
from keel.ui import panels
from keel.ui.app_protocol import ConsoleApp
from keel.ui.polling import Polled, PollSchedule, poll_each
from keel.ui.widgets.lines import LinesPanel
from keel.ui.widgets.plot import LatencyPlot


class PollingScreen(Screen):
    """Polls its collectors while shown, one poll in flight at a time: every
    collector due in one thread job (keel.ui.polling), the timer re-armed when it
    completes (Dolphie's pattern) for when the next one is due. A hidden
    (suspended) screen polls nothing."""

    POLLS: tuple[str, ...] = ()
    # the panels drawn from polled snapshots: collector name -> the panel's lines
    PANELS: ClassVar[dict[str, Callable[[Any], list[Text]]]] = {}

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self._schedule: PollSchedule | None = None
        self._poll_timer: Timer | None = None
        self._poll_inflight = False
        self._poll_active = False
        self._plot: LatencyPlot | None = None  # the screen's, from make_plot()

    @property
    def keel(self) -> ConsoleApp:
        """The app, as screens see it."""
        return cast("ConsoleApp", self.app)

    @property
    def schedule(self) -> PollSchedule:
        if self._schedule is None:
            collectors = self.keel.collectors
            self._schedule = PollSchedule({name: self.keel.interval(name)
                                           for name in self.POLLS if name in collectors})
        return self._schedule

    def on_screen_resume(self) -> None:
        self._poll_active = True
        self.poll_all()

    def on_screen_suspend(self) -> None:
        self._poll_active = False
        self._stop_poll_timer()

    def _stop_poll_timer(self) -> None:
        if self._poll_timer is not None:
            self._poll_timer.stop()
            self._poll_timer = None

    def poll_all(self) -> None:
        """Every collector now (the `r` key; the screen shown again)."""
        self.schedule.all_due()
        self.poll()

    def poll(self) -> None:
        """The collectors due, in one job on a pool thread."""
        if self._poll_inflight or not self._poll_active:
            return
        self._stop_poll_timer()
        now = time.monotonic()
        names = self.schedule.due(now)
        if not names:
            self._arm_poll_timer()
            return
        self.schedule.polled(names, now)
        self._poll_inflight = True
        collectors = [(name, self.keel.collectors[name]) for name in names]
        # a thread of asyncio's pool, not a Textual worker: a worker a tick cost
        # a task and three state messages a second on the UI thread
        asyncio.get_running_loop().run_in_executor(None, self._poll_thread, collectors)

    @property
    def polling(self) -> bool:
        """A poll is in flight (its snapshots not yet drawn)."""
        return self._poll_inflight

    def _poll_thread(self, collectors: list[tuple[str, Any]]) -> None:
        snapshots: dict[str, Any] = {}
        try:
            snapshots = poll_each(collectors)
        finally:  # always: the screen counts on it to poll again
            self.post_message(Polled(snapshots))

    def _arm_poll_timer(self) -> None:
        delay = self.schedule.delay(time.monotonic())
        if delay is not None and self._poll_active:
            self._stop_poll_timer()
            # Textual's timers take no zero delay: one overdue is polled a moment later
            self._poll_timer = self.set_timer(max(delay, 0.01), self.poll)

    def on_polled(self, message: Polled) -> None:
        self._poll_inflight = False
        self._arm_poll_timer()
        for name, snapshot in message.snapshots.items():
            self.show(name, snapshot)

    def show(self, name: str, snapshot: Any) -> None:
        """Draw a polled snapshot: the latency plot where the screen has one,
        and the panels PANELS names; a screen that draws otherwise (the
        verdicts screen) overrides this."""
        if name == "latency" and self._plot is not None:
            self.show_latency(snapshot)
            return
        render = self.PANELS.get(name)
        if render is not None:
            self.query_one(f"#{name}", LinesPanel).set_lines(render(snapshot))

    def make_plot(self) -> LatencyPlot:
        p = self.keel.profile
        self._plot = LatencyPlot(bucket=p.plot_bucket, ascii_only=p.console, id="plot")
        return self._plot

    def show_latency(self, snapshot: LatencySnapshot) -> None:
        plot = self._plot if self._plot is not None else self.query_one(LatencyPlot)
        self.query_one("#latency", LinesPanel).set_lines(
            panels.latency_lines(snapshot, plot.model.glyphs))
        plot.show(snapshot)
