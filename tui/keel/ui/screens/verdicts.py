"""The verdicts screen ([v]): what limits latency now, and the last hour of
signals to scroll back through and export."""

from __future__ import annotations

import time
from typing import Any, ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding

from keel.ui import panels, signals
from keel.ui.screens.polling import PollingScreen
from keel.ui.widgets.footer import Footer
from keel.ui.widgets.lines import LinesPanel


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
