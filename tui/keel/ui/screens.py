"""The screens: the dashboard, the self-test, and the small dialogs."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.message import Message
from textual.screen import ModalScreen, Screen
from textual.timer import Timer
from textual.widgets import Input, Static
from textual.worker import Worker, WorkerState, get_current_worker

from keel.metrics.snapshots import CakeSnapshot, LatencySnapshot, TunnelSnapshot
from keel.selftest.events import Event, Failed, Progress, Sample
from keel.selftest.results import TestResult
from keel.ui import panels, signals
from keel.ui.dialogs import ConfirmScreen
from keel.ui.fmt import progress_bar
from keel.ui.polling import Polled, PollSchedule, poll_each
from keel.ui.selftest import MeasuredRates, Outcome, RecommendedRates, failure, outcome
from keel.ui.selftest_latency import SelfTestLatency
from keel.ui.widgets.bigtext import big_text
from keel.ui.widgets.footer import Footer
from keel.ui.widgets.frame import Frame, frame, set_title
from keel.ui.widgets.lines import LinesPanel
from keel.ui.widgets.plot import LatencyPlot
from keel.ui.widgets.sparkline import CONSOLE_BARS, MODERN_BARS, RateSparkline

if TYPE_CHECKING:
    from keel.ui.app import KeelApp


class TestEvent(Message):
    """A self-test runner's event, posted from the test worker."""

    def __init__(self, event: Event) -> None:
        super().__init__()
        self.event = event


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
    def keel(self) -> KeelApp:
        return self.app  # type: ignore[return-value]

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


class DashboardScreen(PollingScreen):
    """The panels under border titles: NOW (the verdict) on top, TUNNEL (rx/tx
    sparklines) beside CPU, LATENCY (the plot) taking the height left, CAKE
    beside TUNING. At 80x24 on the console every panel fits; a larger
    terminal gives its room to the plot and the sparklines."""

    POLLS = ("tunnel", "cpu", "latency", "cake", "tuning", "verdict")
    PANELS: ClassVar[dict[str, Callable[[Any], list[Text]]]] = {
        "verdict": panels.verdict_lines, "tunnel": panels.tunnel_lines,
        "cpu": panels.cpu_lines, "cake": panels.cake_lines, "tuning": panels.tuning_lines}
    # 80 columns: [w]izard (its key still works) gave its place to [u]pgrade
    KEYS = "[s]elftest [v]erdicts [c]onfig [h]istory [t]unnel [u]pgrade [p]access [!] [q]uit"
    # one grid, no rows of containers: every container under a panel is one
    # more layer the compositor renders under each change. Three columns: the
    # side panels span the last one (TUNING) or two (CPU).
    DEFAULT_CSS = """
    DashboardScreen {
        layout: grid;
        grid-size: 3;
        grid-columns: 1fr 12 30;
        grid-rows: auto auto 1fr auto;
    }
    DashboardScreen.console { grid-columns: 1fr 8 26; }
    DashboardScreen #verdict, DashboardScreen #latency-box { column-span: 3; }
    DashboardScreen #cpu, DashboardScreen #cake { column-span: 2; }
    DashboardScreen RateSparkline { height: 2; }
    DashboardScreen.console RateSparkline { height: 1; }
    DashboardScreen #rx-spark > .sparkline--max-color { color: $success; }
    DashboardScreen #tx-spark > .sparkline--max-color { color: $warning; }
    """

    def compose(self) -> ComposeResult:
        console = self.keel.profile.console
        self.set_class(console, "console")

        def panel(name: str, side: bool = False) -> LinesPanel:
            """A LinesPanel under its title (no container: one layer fewer)."""
            return frame(LinesPanel(id=name), panels.TITLES[name], console=console, side=side)

        yield panel("verdict")
        with Frame(panels.TITLES["tunnel"], console=console, id="tunnel-box"):
            for name in ("rx", "tx"):
                yield RateSparkline(ascii_only=console, id=f"{name}-spark")
            yield LinesPanel(id="tunnel")
        yield panel("cpu", side=True)
        with Frame(panels.TITLES["latency"], console=console, grow=True, id="latency-box"):
            yield LinesPanel(id="latency")
            yield self.make_plot()
        yield panel("cake")
        yield panel("tuning", side=True)
        yield Footer(self.KEYS, id="footer")

    def on_mount(self) -> None:
        for name, render in self.PANELS.items():
            self.query_one(f"#{name}", LinesPanel).set_lines(render(None))
        self.query_one("#latency", LinesPanel).set_lines(panels.latency_lines(None, {}))
        self.show_rates(None)

    def show(self, name: str, snapshot: Any) -> None:
        if name == "cake":
            self.show_cake(snapshot)
            return
        super().show(name, snapshot)
        if name == "tunnel":
            self.show_rates(snapshot)

    def show_cake(self, snapshot: CakeSnapshot | None) -> None:
        """The CAKE panel; with adaptive CAKE, its sparklines as wide as the
        panel and in the profile's glyphs, and how far back they go."""
        cake = self.query_one("#cake", LinesPanel)
        bars = CONSOLE_BARS if self.keel.profile.console else MODERN_BARS
        cake.set_lines(panels.cake_lines(snapshot, cake.size.width or 54, bars))
        set_title(cake, panels.cake_title(snapshot))

    def show_rates(self, snapshot: TunnelSnapshot | None) -> None:
        """The tunnel's rx and tx now, beside their sparklines (the history
        the collector keeps in the snapshot)."""
        now = panels.tunnel_rates(snapshot)
        history = (() if snapshot is None else snapshot.rx_history,
                   () if snapshot is None else snapshot.tx_history)
        for name, bps, data in zip(("rx", "tx"), now, history, strict=True):
            self.query_one(f"#{name}-spark", RateSparkline).show(
                data, panels.rate_label(name, bps))
        span = self.query_one("#rx-spark", RateSparkline).span()
        title = panels.TITLES["tunnel"]
        set_title(self.query_one("#tunnel-box", Frame),
                  f"{title}  bit/s, last {span} s" if span else title)


class VerdictsScreen(PollingScreen):
    """What limits latency: the verdicts now, and the last hour of stalls and
    tunnel latency as a plot to scroll back through, and to export."""

    POLLS = ("tunnel", "cpu", "latency", "cake", "tuning", "verdict")
    KEYS = "[<][>] scroll  [+][-] zoom  [e] export  [esc] back"
    BINDINGS: ClassVar[list[Binding]] = [
        Binding("left", "scroll(1)", "older"),
        Binding("right", "scroll(-1)", "newer"),
        Binding("plus,equals_sign", "zoom(-1)", "zoom in"),
        Binding("minus", "zoom(1)", "zoom out"),
        Binding("e", "export", "export"),
        Binding("escape", "back", "back"),
    ]

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.span = signals.SPANS_S[1]
        self.back_s = 0  # how far before now the plot ends
        self.snapshot: Any = None

    def compose(self) -> ComposeResult:
        yield LinesPanel(id="verdicts")
        yield LinesPanel(id="signals")
        yield Footer(self.KEYS, id="footer")

    def on_mount(self) -> None:
        self.query_one("#verdicts", LinesPanel).set_lines(panels.verdict_lines(None))

    def show(self, name: str, snapshot: Any) -> None:
        if name == "verdict":
            self.snapshot = snapshot
            self.redraw()

    def redraw(self) -> None:
        snap = self.snapshot
        if snap is None:
            return
        lines = [Text(f"VERDICTS  over the last 10 s, worst first  (window "
                      f"{self.span // 60} min, {self.back_s // 60} min ago)", style="bold")]
        lines += [Text("  " + v.text, style=panels.VERDICT_STYLE.get(v.severity, ""))
                  for v in snap.verdicts[:3]]
        self.query_one("#verdicts", LinesPanel).set_lines(lines)
        end = (snap.signals.t if snap.signals else time.time()) - self.back_s
        self.query_one("#signals", LinesPanel).set_lines(signals.plot_lines(
            snap.history, end, self.span, self.size.width or 80,
            ascii_only=self.keel.profile.console))

    def action_scroll(self, pages: int) -> None:
        kept = len(self.snapshot.history) if self.snapshot else 0
        self.back_s = max(0, min(kept, self.back_s + pages * self.span // 3))
        self.redraw()

    def action_zoom(self, step: int) -> None:
        i = signals.SPANS_S.index(self.span) + step
        self.span = signals.SPANS_S[max(0, min(len(signals.SPANS_S) - 1, i))]
        self.redraw()

    def action_export(self) -> None:
        if self.snapshot is None or not self.snapshot.history:
            self.query_one(Footer).say("nothing to export yet")
            return
        try:
            path = signals.export(self.snapshot.history)
        except OSError as err:
            self.query_one(Footer).say(f"not exported: {err}")
            return
        self.query_one(Footer).say(f"{len(self.snapshot.history)} s exported to {path}")

    def action_back(self) -> None:
        self.app.pop_screen()


class SelfTestScreen(PollingScreen):
    """Runs a test and shows its progress, its own latency probes (the `sample`
    events: no pinger of the screen's own) and its outcome."""

    POLLS = ()
    NO_SAMPLES = "the test's own probes, while a test runs"
    LATENCY_TITLE = "LATENCY  ms, the test's own probes"
    KEYS = "[t]hroughput [b]ufferbloat [c]ompare CAKE on/off [m]tu [a]pply rates [esc] back"
    BINDINGS: ClassVar[list[Binding]] = [
        Binding("t", "run('throughput')", "throughput"),
        Binding("b", "run('bufferbloat')", "bufferbloat"),
        Binding("c", "run('bufferbloat', True)", "compare"),
        Binding("m", "run('mtu')", "MTU"),
        Binding("a", "apply_rates", "apply"),
        Binding("k", "keep", "keep"),
        Binding("escape", "back", "back"),
    ]

    def __init__(self, prefer_adaptive: bool = False, **kwargs) -> None:
        super().__init__(**kwargs)
        # the setup wizard's answer: [a] then [y] takes adaptive CAKE (when offered)
        self.prefer_adaptive = prefer_adaptive
        self.kind = ""
        self.outcome: Outcome | None = None
        self.results: list[TestResult] = []  # of the run going on
        self.latency = SelfTestLatency()
        self.running: Worker | None = None

    def compose(self) -> ComposeResult:
        yield Static(Text("SELF-TEST  against the WireGuard peer", style="bold"), id="st-title")
        yield LinesPanel(id="st-status")
        with Frame(self.LATENCY_TITLE, console=self.keel.profile.console, grow=True,
                   id="latency-box"):
            yield LinesPanel(id="latency")
            yield self.make_plot()
        with Static(id="st-result"):
            yield LinesPanel(id="grade")
            yield LinesPanel(id="summary")
        yield Footer(self.KEYS, id="footer")

    def on_mount(self) -> None:
        self.set_status("idle: choose a test", None)
        self.query_one("#latency", LinesPanel).set_lines(
            panels.latency_lines(None, {}, self.NO_SAMPLES))
        self.query_one("#grade", LinesPanel).set_lines([])
        self.query_one("#summary", LinesPanel).set_lines([Text("no result yet", style="dim")])

    def set_status(self, text: str, fraction: float | None) -> None:
        bar = Text(progress_bar(fraction)) if fraction is not None else Text("")
        self.query_one("#st-status", LinesPanel).set_lines([Text(text), bar])

    def show_samples(self) -> None:
        snapshot = self.latency.snapshot()
        if snapshot is not None:
            self.show_latency(snapshot)

    def action_run(self, kind: str, compare: bool = False) -> None:
        if self.running is not None and not self.running.is_finished:
            self.query_one(Footer).say("a test is running: [esc] stops it")
            return
        self.kind, self.outcome, self.results = kind, None, []
        self.latency = SelfTestLatency()
        label = kind + (" (compare with CAKE bypassed)" if compare else "")
        self.set_status(f"running {label} ...", 0.0)
        self.keel.pause_latency()  # the test probes on its own: one pinger at a time
        self.running = self._run(kind, {"compare": compare} if compare else {})

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.worker.group == "selftest" and event.worker.is_finished:
            self.keel.resume_latency()

    @work(thread=True, exclusive=True, group="selftest", exit_on_error=False)
    def _run(self, kind: str, options: dict[str, Any]) -> None:
        worker = get_current_worker()
        events = self.keel.runner.start(kind, options)
        try:
            for event in events:
                if worker.is_cancelled:
                    break
                self.post_message(TestEvent(event))
        except Exception as exc:  # the runner's failure is a result, not a crash
            self.post_message(TestEvent(Failed(kind, f"{type(exc).__name__}: {exc}")))
        finally:
            close = getattr(events, "close", None)
            if close is not None:
                close()

    def on_test_event(self, message: TestEvent) -> None:
        event = message.event
        if isinstance(event, Sample):
            self.latency.add(event)  # drawn with the next progress or result
            return
        self.show_samples()
        if isinstance(event, Progress):
            self.set_status(event.text or event.phase, event.fraction)
            return
        if isinstance(event, Failed):
            self.outcome = failure(event)
        else:
            self.results.append(event)
            self.outcome = outcome(self.kind, self.results)
        self.show_result(self.outcome)

    def show_result(self, result: Outcome) -> None:
        if result.error:
            self.set_status(f"{result.kind} failed", None)
            lines = [Text(result.error, style="bold red")]
        else:
            self.set_status(f"{result.kind} done", 1.0)
            lines = [Text(line) for line in result.summary]
            if result.recommended:
                r = result.recommended
                lines.append(Text(f"CAKE: egress {r.egress_bps / 1e6:.1f} ingress "
                                  f"{r.ingress_bps / 1e6:.1f} Mbit/s  [a] "
                                  + ("adaptive" if self.prefer_adaptive else "apply"),
                                  style="bold"))
        grade = []
        if result.grade:
            style = "bold green" if result.grade.startswith("A") else "bold yellow" \
                if result.grade in ("B", "C") else "bold red"
            grade = [Text(row, style=style) for row in big_text(result.grade,
                                                                self.keel.profile.console)]
            grade.append(Text(f"grade {result.grade}", style="bold"))
        self.query_one("#grade", LinesPanel).set_lines(grade)
        self.query_one("#summary", LinesPanel).set_lines(lines)

    def action_back(self) -> None:
        if self.running is not None and not self.running.is_finished:
            self.running.cancel()
            self.set_status("stopped", None)
            return
        self.app.pop_screen()

    def adaptive_refusal(self, rates: RecommendedRates) -> str | None:
        """Why adaptive CAKE is not offered with these rates (None: it is)."""
        measured = self.outcome.measured if self.outcome else None
        if measured is None or not (rates.egress_bps or rates.ingress_bps):
            return "the test measured no rate to adapt"
        try:
            return self.keel.adaptive_offer()
        except Exception as exc:  # the offer reads the config: a failure is a reason
            return f"cannot tell: {exc}"

    def action_apply_rates(self) -> None:
        rates = self.outcome.recommended if self.outcome else None
        if rates is None:
            self.query_one(Footer).say("no recommended rates yet: run a test first")
            return
        measured = self.outcome.measured if self.outcome else None
        question = (f"Apply CAKE rates egress {rates.egress_bps / 1e6:.1f} Mbit/s and ingress "
                    f"{rates.ingress_bps / 1e6:.1f} Mbit/s?\nThe change rolls back by itself "
                    "unless confirmed (keel apply --confirm).")
        refusal = self.adaptive_refusal(rates)
        adaptive = None
        if refusal is None and measured is not None:
            adaptive = adaptive_choice(rates, measured)

        def answered(choice: str | None) -> None:
            if choice == "fixed":
                self.set_status("applying ...", None)
                self._apply(rates)
            elif choice == "adaptive" and measured is not None:
                self.set_status("applying adaptive CAKE ...", None)
                self._apply_adaptive(rates, measured)

        self.app.push_screen(RatesConfirmScreen(question, adaptive, refusal,
                                                self.prefer_adaptive), answered)

    @work(thread=True, exclusive=True, group="apply", exit_on_error=False)
    def _apply(self, rates: RecommendedRates) -> None:
        try:
            said = self.keel.apply_rates(rates)
        except Exception as exc:
            said = f"apply failed: {exc}"
        self.app.call_from_thread(self.set_status, said, None)

    @work(thread=True, exclusive=True, group="apply", exit_on_error=False)
    def _apply_adaptive(self, rates: RecommendedRates, measured: MeasuredRates) -> None:
        try:
            said = self.keel.apply_adaptive(rates, measured)
        except Exception as exc:
            said = f"apply failed: {exc}"
        self.app.call_from_thread(self.set_status, said, None)


    def action_keep(self) -> None:
        """Keep what [a] applied (`keel confirm`), before it rolls back."""
        self._keep()

    @work(thread=True, exclusive=True, group="apply", exit_on_error=False)
    def _keep(self) -> None:
        try:
            said = self.keel.keep_applied()
        except Exception as exc:
            said = f"keep failed: {exc}"
        self.app.call_from_thread(self.set_status, said, None)


def adaptive_choice(rates: RecommendedRates, measured: MeasuredRates) -> str:
    """What [a] adaptive would apply, Mbit/s min-base-max a direction (the
    rule: keel.apply.rates.adaptive_bounds)."""
    from keel.apply.rates import adaptive_bounds

    def way(name: str, base_bps: int, measured_bps: int) -> str:
        bounds = adaptive_bounds(base_bps // 1000, measured_bps // 1000)
        if not bounds[1]:
            return f"{name} not shaped"
        return f"{name} " + "-".join(f"{kbit / 1000:.1f}" for kbit in bounds)

    return (way("egress", rates.egress_bps, measured.egress_bps) + ", "
            + way("ingress", rates.ingress_bps, measured.ingress_bps))


class RatesConfirmScreen(ConfirmScreen):
    """[a]'s question: the rates fixed, or adaptive CAKE around them (when
    the config can take it; else why not). Dismisses "fixed", "adaptive" or
    None; [y] takes the preferred one (fixed, unless the setup chose adaptive
    and it is offered)."""

    BINDINGS: ClassVar[list[Binding]] = [
        Binding("y", "choose('yes')", "yes"), Binding("f", "choose('fixed')", "fixed"),
        Binding("a", "choose('adaptive')", "adaptive"), Binding("n", "choose('')", "no"),
        Binding("escape", "choose('')", "no")]

    def __init__(self, question: str, adaptive: str | None, refusal: str | None,
                 prefer_adaptive: bool = False) -> None:
        super().__init__(question)
        self.adaptive, self.refusal = adaptive, refusal
        self.preferred = "adaptive" if prefer_adaptive and adaptive is not None else "fixed"

    def choices(self) -> list[str]:
        figures = f"    {self.adaptive}"
        if self.preferred == "adaptive":
            lines = ["[y] yes, or [a]: adaptive, chosen in setup (Mbit/s min-base-max)",
                     figures, "[f] fixed at these rates instead"]
        else:
            lines = ["[y] yes, or [f]: fixed at these rates"]
            lines += (["[a] adaptive: CAKE follows the line (Mbit/s min-base-max)", figures]
                      if self.adaptive is not None else
                      [f"[a] adaptive: not offered: {self.refusal or 'no'}"])
        return [*lines, "[n] no"]

    def compose(self) -> ComposeResult:
        yield Static(f"{self.question}\n\n" + "\n".join(self.choices()), id="dialog",
                     markup=False)

    def action_choose(self, choice: str) -> None:
        if choice == "yes":
            choice = self.preferred
        if choice == "adaptive" and self.adaptive is None:
            self.app.bell()  # not offered: the dialog says why
            return
        self.dismiss(choice or None)


class PasswordScreen(ModalScreen[bool]):
    """Asks for the root password; dismisses True once it is right."""

    BINDINGS: ClassVar[list[Binding]] = [Binding("escape", "cancel", "cancel")]
    MAX_TRIES = 3

    def __init__(self) -> None:
        super().__init__()
        self.tries = 0

    def compose(self) -> ComposeResult:
        with Static(id="dialog"):
            yield Static("Root shell: enter the root password ([esc] cancels)", markup=False)
            yield Input(password=True, id="password")
            yield Static("", id="pw-error", markup=False)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.input.disabled = True
        password = event.value
        # a description of its own: a worker's default one shows its arguments
        self.run_worker(lambda: self._verify(password), thread=True, group="password",
                        exclusive=True, description="check root's password",
                        exit_on_error=False)
        event.input.value = ""

    def _verify(self, password: str) -> bool:
        ok = self.app.shell.verify(password)  # type: ignore[attr-defined]
        if not ok:
            time.sleep(self.app.password_delay)  # type: ignore[attr-defined]
        return ok

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        # once the worker has ended: a dismiss from inside it (the right
        # password) would cancel the worker that asked for it
        if event.worker.group != "password":
            return
        if event.state == WorkerState.SUCCESS:
            self._verified(bool(event.worker.result))
        elif event.state == WorkerState.ERROR:  # not a wrong password: say what broke
            self._ask_again(f"could not check the password "
                            f"({type(event.worker.error).__name__})")

    def _verified(self, ok: bool) -> None:
        if ok:
            self.dismiss(True)
            return
        self.tries += 1
        if self.tries >= self.MAX_TRIES:
            self.dismiss(False)
            return
        self._ask_again("wrong password")

    def _ask_again(self, why: str) -> None:
        self.query_one("#pw-error", Static).update(why)
        field = self.query_one("#password", Input)
        field.disabled = False
        field.focus()

    def action_cancel(self) -> None:
        self.dismiss(False)
