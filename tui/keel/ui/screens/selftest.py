"""The self-test screen ([s]): runs a test, shows its progress, its own
latency probes and its outcome; [a] applies the recommended CAKE rates,
fixed or adaptive, with confirm."""

from __future__ import annotations

from typing import Any, ClassVar

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.message import Message
from textual.widgets import Static
from textual.worker import Worker, get_current_worker

from keel.selftest.events import Event, Failed, Progress, Sample
from keel.selftest.results import TestResult
from keel.ui import panels
from keel.ui.dialogs import ConfirmScreen
from keel.ui.fmt import progress_bar
from keel.ui.screens.polling import PollingScreen
from keel.ui.selftest import MeasuredRates, Outcome, RecommendedRates, failure, outcome
from keel.ui.selftest_latency import SelfTestLatency
from keel.ui.widgets.bigtext import big_text
from keel.ui.widgets.footer import Footer
from keel.ui.widgets.frame import Frame
from keel.ui.widgets.lines import LinesPanel


class TestEvent(Message):
    """A self-test runner's event, posted from the test worker."""

    def __init__(self, event: Event) -> None:
        super().__init__()
        self.event = event


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


def start_selftest(app: Any, adaptive: bool = False) -> None:
    """The self-test screen, running the throughput test: its [a] applies
    the recommended rates with confirm (`adaptive`: [a] then [y] takes
    adaptive CAKE around them, the setup's choice), [k] keeps them."""
    screen = SelfTestScreen(prefer_adaptive=adaptive, id="selftest")
    app.push_screen(screen)
    screen.call_after_refresh(screen.action_run, "throughput")
