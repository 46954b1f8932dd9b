"""The rate controller of one direction: pure, a step a tick.

Each tick gets the one-way delays (ms, with the clocks' unknown offset in
them) of this direction's probes answered since the last tick, what got
through CAKE over the last load window, whether this router or its peer was
stalled, and when the peer last answered. It returns the next state and a
Decision: the rate to run at and why. The baseline cancels the clocks'
offset: only a sample's rise over its own direction's baseline counts.

Order of the rules (thresholds in keel.thresholds, ADAPT_*):
1. the peer silent: hold the rate ADAPT_PEER_HOLD_S, then the base;
2. bufferbloat (ADAPT_DELAYED of the last ADAPT_WINDOW samples delayed):
   in a tick with a stall, skipped (the delay says nothing about the line);
   otherwise a cut in proportion to the excess, from the rate or from what got
   through if that is less (a line that fell is followed in one step);
3. under load with no delayed sample (and fresh samples in this tick):
   a small raise, towards the max;
4. next to no load: a drift back to the base;
5. otherwise the rate is held.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from keel import thresholds as th


@dataclass(frozen=True)
class Bounds:
    """The rates (kbit/s) a direction may run at, and the one it rests at."""

    min_kbit: int
    base_kbit: int
    max_kbit: int

    def __post_init__(self) -> None:
        if not 0 < self.min_kbit <= self.base_kbit <= self.max_kbit:
            raise ValueError(f"need 0 < min <= base <= max, not {self.min_kbit}, "
                             f"{self.base_kbit}, {self.max_kbit}")

    def clamp(self, kbit: float) -> int:
        return int(min(self.max_kbit, max(self.min_kbit, round(kbit))))


@dataclass(frozen=True)
class Tick:
    now: float  # monotonic seconds
    samples: tuple[float, ...]  # this direction's one-way delays (ms) since the last tick
    through_kbit: float  # what got through this direction's CAKE over the load window
    # why this tick tells nothing about the line, in words ("" when it does):
    # this router's CPU stalled or a core saturated, or the peer's stalled
    stall: str
    last_reply: float | None  # monotonic time of the peer's last answer (None: never)


@dataclass(frozen=True)
class State:
    rate_kbit: int
    baseline_ms: float | None = None
    delayed: tuple[bool, ...] = ()  # the last ADAPT_WINDOW samples: delayed or not
    excess_ms: tuple[float, ...] = ()  # the delayed ones' rise over the threshold
    last_cut: float = float("-inf")
    last_raise: float = float("-inf")
    last_tick: float | None = None


@dataclass(frozen=True)
class Decision:
    rate_kbit: int
    reason: str  # "" when nothing happened worth a line in the log
    kind: str = "hold"  # cut, raise, drift, base, hold, stall-skipped


def start(bounds: Bounds) -> State:
    return State(rate_kbit=bounds.base_kbit)


def resting(state: State, through_kbit: float, bounds: Bounds) -> bool:
    """The direction at its base with next to no load: nothing for the
    controller to do (the daemon then probes at ADAPT_RESTING_HZ)."""
    return (state.rate_kbit == bounds.base_kbit
            and through_kbit < th.ADAPT_IDLE_LOAD * bounds.base_kbit)


def threshold_ms(rate_kbit: int) -> float:
    """A sample's rise over the baseline from which it counts as delayed."""
    return th.ADAPT_DELAY_MS + th.ADAPT_PACKET_BITS / max(rate_kbit, 1)


def _absorb(state: State, samples: Sequence[float]
            ) -> tuple[float | None, tuple[bool, ...], tuple[float, ...]]:
    """Each sample moves the baseline and is marked delayed or not: the new
    (baseline, delayed window, excesses of the delayed ones)."""
    if not samples:
        return state.baseline_ms, state.delayed, state.excess_ms
    baseline, delayed, excess = state.baseline_ms, list(state.delayed), list(state.excess_ms)
    limit = threshold_ms(state.rate_kbit)
    for ms in samples:
        if baseline is None:
            baseline = ms
        rise = ms - baseline
        if rise < 0:
            baseline += th.ADAPT_BASELINE_DOWN * rise
        elif rise < limit:
            baseline += th.ADAPT_BASELINE_UP * rise
        late = rise >= limit
        delayed.append(late)
        if late:
            excess.append(rise - limit)
    delayed = delayed[-th.ADAPT_WINDOW:]
    late_count = sum(delayed)
    return baseline, tuple(delayed), tuple(excess[-late_count:]) if late_count else ()


def cut_factor(excess_ms: float) -> float:
    """The share of the rate kept by a cut, for a mean excess over the threshold."""
    share = min(max(excess_ms, 0.0) / th.ADAPT_CUT_FULL_MS, 1.0)
    return 1.0 - (th.ADAPT_CUT_LEAST + share * (th.ADAPT_CUT_MOST - th.ADAPT_CUT_LEAST))


def step(state: State, tick: Tick, bounds: Bounds) -> tuple[State, Decision]:
    """The next state and what to run at; see the module's docstring."""
    since = 0.0 if state.last_tick is None else max(tick.now - state.last_tick, 0.0)
    baseline, delayed, excess_ms = _absorb(state, tick.samples)
    state = State(state.rate_kbit, baseline, delayed, excess_ms, state.last_cut,
                  state.last_raise, tick.now)
    rate = state.rate_kbit

    silent = (float("inf") if tick.last_reply is None
              else tick.now - tick.last_reply)
    if silent >= th.ADAPT_PEER_HOLD_S:
        state = replace(state, delayed=(), excess_ms=())
        if silent >= th.ADAPT_PEER_LOST_S and rate != bounds.base_kbit:
            state = replace(state, rate_kbit=bounds.base_kbit)
            why = ("no answer from the peer yet: the base" if tick.last_reply is None
                   else f"peer silent {silent:.0f} s: the base")
            return state, Decision(bounds.base_kbit, why, "base")
        return state, Decision(rate, "")

    if sum(state.delayed) >= th.ADAPT_DELAYED:
        excess = sum(state.excess_ms) / len(state.excess_ms)
        rise = excess + threshold_ms(rate)
        if tick.stall:
            state = replace(state, delayed=(), excess_ms=())
            return state, Decision(rate, f"stall: skipped (delay +{rise:.0f} ms; {tick.stall})",
                                   "stall-skipped")
        if tick.now - state.last_cut < th.ADAPT_CUT_EVERY_S:
            return state, Decision(rate, "")
        through = tick.through_kbit
        reference = min(rate, through) if through >= bounds.min_kbit * 0.5 else rate
        new = bounds.clamp(reference * cut_factor(excess))
        state = replace(state, rate_kbit=new, delayed=(), excess_ms=(), last_cut=tick.now)
        return state, Decision(new, f"delay +{rise:.0f} ms at {through:.0f} kbit/s "
                                    f"through: cut", "cut")

    load = tick.through_kbit / rate
    if tick.stall:
        return state, Decision(rate, "")
    if (load >= th.ADAPT_HIGH_LOAD and tick.samples and not any(state.delayed)
            and tick.now - state.last_raise >= th.ADAPT_RAISE_EVERY_S
            and tick.now - state.last_cut >= th.ADAPT_RAISE_AFTER_CUT_S
            and rate < bounds.max_kbit):
        new = bounds.clamp(rate * (1 + th.ADAPT_RAISE_STEP))
        if new == rate:
            new = min(rate + 1, bounds.max_kbit)
        state = replace(state, rate_kbit=new, last_raise=tick.now)
        return state, Decision(new, f"load {load:.0%}, no delay: raise", "raise")
    if load < th.ADAPT_IDLE_LOAD and rate != bounds.base_kbit and since > 0:
        gap = bounds.base_kbit - rate
        moved = gap * min(1.0, th.ADAPT_DRIFT_PER_S * since)
        new = bounds.clamp(rate + moved)
        if new == rate:  # the last few kbit/s
            new = bounds.base_kbit if abs(gap) <= 1 else rate + (1 if gap > 0 else -1)
        state = replace(state, rate_kbit=new)
        return state, Decision(new, "idle: drift to the base", "drift")
    return state, Decision(rate, "")
