"""The console app as its screens see it: what they may ask of it. Screens
reach the app through this Protocol and never import keel.ui.app (which
imports them); keel.ui.app.KeelApp is what holds it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from keel.ui.profile import Profile
from keel.ui.selftest import MeasuredRates, RecommendedRates, SelfTestRunner
from keel.ui.shell import RootShell

ApplyRates = Callable[[RecommendedRates], str]
ApplyAdaptive = Callable[[RecommendedRates, MeasuredRates], str]
AdaptiveOffer = Callable[[], str | None]  # why adaptive CAKE is not offered; None: it is
KeepApplied = Callable[[], str]


class ConsoleApp(Protocol):
    """The collectors polled by name, the profile drawn in, the self-test
    runner and what applies its rates, the root shell; the dashboard's
    pingers paused while a self-test probes on its own."""

    collectors: dict[str, Any]
    profile: Profile
    runner: SelfTestRunner
    apply_rates: ApplyRates
    apply_adaptive: ApplyAdaptive
    adaptive_offer: AdaptiveOffer
    keep_applied: KeepApplied
    shell: RootShell
    password_delay: float  # seconds a wrong root password waits before the next try

    def interval(self, name: str) -> float:
        """Seconds between two polls of the collector `name`."""
        ...

    def pause_latency(self) -> None: ...

    def resume_latency(self) -> None: ...

    def say(self, text: str) -> None:
        """A message on the footer of the screen in front, for a while."""
        ...
