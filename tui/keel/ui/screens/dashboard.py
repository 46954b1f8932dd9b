"""The dashboard: the verdict, the tunnel's rates, the CPU, the latency plot,
CAKE and the tuning, each panel under its title."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

from rich.text import Text
from textual.app import ComposeResult

from keel.metrics.snapshots import CakeSnapshot, TunnelSnapshot
from keel.ui import panels
from keel.ui.screens.polling import PollingScreen
from keel.ui.widgets.footer import Footer
from keel.ui.widgets.frame import Frame, frame, set_title
from keel.ui.widgets.lines import LinesPanel
from keel.ui.widgets.sparkline import CONSOLE_BARS, MODERN_BARS, RateSparkline


class DashboardScreen(PollingScreen):
    """The panels under border titles: NOW (the verdict) on top, TUNNEL (rx/tx
    sparklines) beside CPU, LATENCY (the plot) taking the height left, CAKE
    beside TUNING. At 80x24 on the console every panel fits; a larger
    terminal gives its room to the plot and the sparklines."""

    POLLS = ("tunnel", "cpu", "latency", "cake", "tuning", "verdict")
    PANELS: ClassVar[dict[str, Callable[[Any], list[Text]]]] = {
        "verdict": panels.verdict_lines, "tunnel": panels.tunnel_lines,
        "cpu": panels.cpu_lines, "cake": panels.cake_lines, "tuning": panels.tuning_lines}
    # 80 columns: [w]izard and [h] (the config's revisions) are not listed (their keys work)
    KEYS = "[s]elftest [v]erdicts histor[y] [c]onfig [t]unnel [u]pgrade [p]access [!] [q]uit"
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
