"""The adaptive rate controller of one direction, rule by rule, on ticks
made by hand (keel.adaptive.controller: pure)."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from keel import thresholds as th
from keel.adaptive.controller import Bounds, State, Tick, cut_factor, start, step, threshold_ms

B = Bounds(min_kbit=500, base_kbit=3000, max_kbit=4000)
IDLE_MS = 20.0  # the line's delay with no queue


def run(state: State, ticks: list[Tick]):
    decisions = []
    for tick in ticks:
        state, decision = step(state, tick, B)
        decisions.append(decision)
    return state, decisions


def tick(now: float, *samples: float, through: float = 0.0, stalled: bool = False,
         last_reply: float | None = None) -> Tick:
    return Tick(now, tuple(samples), through, "a core of this router saturated" if stalled else "",
                now if last_reply is None else last_reply)


def settled(rate: int = 3000) -> State:
    """A direction that has seen the idle line for a while."""
    state = State(rate_kbit=rate)
    state, _ = run(state, [tick(0.1 * i, IDLE_MS, through=0.5 * rate) for i in range(10)])
    return state


def test_it_starts_at_the_base() -> None:
    assert start(B).rate_kbit == 3000


def test_bounds_must_be_ordered() -> None:
    with pytest.raises(ValueError, match="0 < min <= base <= max"):
        Bounds(3000, 2000, 4000)


def test_the_threshold_grows_at_low_rates() -> None:
    assert threshold_ms(12_000) == pytest.approx(th.ADAPT_DELAY_MS + 1.0)
    assert threshold_ms(600) == pytest.approx(th.ADAPT_DELAY_MS + 20.0)


def test_the_cut_grows_with_the_excess() -> None:
    assert cut_factor(0) == pytest.approx(1 - th.ADAPT_CUT_LEAST)
    assert cut_factor(th.ADAPT_CUT_FULL_MS) == pytest.approx(1 - th.ADAPT_CUT_MOST)
    assert cut_factor(1000) == cut_factor(th.ADAPT_CUT_FULL_MS)
    assert cut_factor(10) > cut_factor(30)


def test_three_delayed_samples_of_six_cut_from_what_got_through() -> None:
    """The line fell to 1.5 Mbit/s under CAKE's 3: the delay rises, and the
    cut starts from what got through, not from the old rate."""
    state = settled()
    late = IDLE_MS + 100
    state, decisions = run(state, [tick(1.1, late, through=1500), tick(1.2, late, through=1500),
                                   tick(1.3, late, through=1500)])
    assert [d.kind for d in decisions] == ["hold", "hold", "cut"]
    assert decisions[-1].rate_kbit == round(1500 * (1 - th.ADAPT_CUT_MOST))
    assert "delay +100 ms" in decisions[-1].reason and "cut" in decisions[-1].reason


def test_a_small_excess_cuts_a_little() -> None:
    state = settled()
    late = IDLE_MS + threshold_ms(3000) + 1
    state, decisions = run(state, [tick(1.1 + 0.1 * i, late, through=2900) for i in range(3)])
    assert decisions[-1].kind == "cut"
    assert 0.97 * 2900 < decisions[-1].rate_kbit < 2900


def test_cuts_are_spaced_and_need_fresh_evidence() -> None:
    state = settled()
    late = IDLE_MS + 100
    state, d = run(state, [tick(1.0 + 0.1 * i, late, through=1500) for i in range(6)])
    kinds = [x.kind for x in d]
    assert kinds == ["hold", "hold", "cut", "hold", "hold", "cut"]


def test_a_stalled_tick_does_not_cut_and_says_so() -> None:
    state = settled()
    late = IDLE_MS + 100
    state, d = run(state, [tick(1.1, late, through=2900), tick(1.2, late, through=2900),
                           tick(1.3, late, through=2900, stalled=True)])
    assert d[-1].kind == "stall-skipped" and d[-1].rate_kbit == 3000
    assert d[-1].reason == "stall: skipped (delay +100 ms; a core of this router saturated)"


def test_the_baseline_does_not_climb_with_a_lasting_bloat() -> None:
    """A queue that stays full stays delayed: the baseline rises only with
    samples under the threshold."""
    state = settled()
    for i in range(200):
        state, _ = step(state, tick(2 + 0.1 * i, IDLE_MS + 80, through=100, stalled=True), B)
    assert state.baseline_ms == pytest.approx(IDLE_MS, abs=0.5)


def test_the_baseline_follows_a_shorter_path_at_once() -> None:
    state = settled()
    state, _ = step(state, tick(2.0, IDLE_MS - 10, through=0), B)
    assert state.baseline_ms == pytest.approx(IDLE_MS - 9)


def test_the_clock_offset_cancels() -> None:
    """The same line seen with a clock 5 s off: the same decisions."""
    late = IDLE_MS + 100
    plain = run(settled(), [tick(1.0 + 0.1 * i, late, through=1500) for i in range(6)])[1]
    off = State(rate_kbit=3000)
    off, _ = run(off, [tick(0.1 * i, IDLE_MS + 5000, through=1500) for i in range(10)])
    shifted = run(off, [tick(1.0 + 0.1 * i, late + 5000, through=1500) for i in range(6)])[1]
    assert plain == shifted


def test_under_load_with_no_delay_it_raises_in_small_steps_to_the_max() -> None:
    state = settled()
    rates = []
    for i in range(200):
        now = 1.0 + 0.1 * i
        state, d = step(state, tick(now, IDLE_MS, through=state.rate_kbit * 0.9), B)
        rates.append(d.rate_kbit)
    assert rates[-1] == 4000
    steps = [b / a for a, b in itertools.pairwise(rates) if b != a]
    assert steps and max(steps) <= 1 + th.ADAPT_RAISE_STEP + 0.001


def test_no_raise_soon_after_a_cut() -> None:
    state = settled()
    late = IDLE_MS + 100
    state, _ = run(state, [tick(1.0 + 0.1 * i, late, through=1500) for i in range(3)])
    cut_at, cut_when = state.rate_kbit, state.last_cut
    times = [1.3 + 0.1 * i for i in range(12)]
    state, d = run(state, [tick(t, IDLE_MS, through=cut_at) for t in times])
    kinds = {t: x.kind for t, x in zip(times, d, strict=True)}
    assert all(k == "hold" for t, k in kinds.items()
               if t < cut_when + th.ADAPT_RAISE_AFTER_CUT_S - 1e-9)
    assert "raise" in kinds.values()


def test_idle_drifts_back_to_the_base() -> None:
    state = State(rate_kbit=4000, baseline_ms=IDLE_MS, last_tick=0.0)
    for i in range(1, 600):
        state, d = step(state, tick(0.1 * i, IDLE_MS, through=0), B)
    assert state.rate_kbit == 3000
    assert d.kind in ("drift", "hold")


def test_a_silent_peer_holds_then_falls_to_the_base() -> None:
    state = State(rate_kbit=1000, baseline_ms=IDLE_MS, last_tick=0.0)
    state, d1 = step(state, tick(1.0, through=900, last_reply=0.0), B)
    assert d1.rate_kbit == 1000  # no fresh sample: no raise on old evidence
    state, d2 = step(state, tick(th.ADAPT_PEER_HOLD_S + 0.5, through=900, last_reply=0.0), B)
    assert d2.rate_kbit == 1000 and d2.kind == "hold"
    state, d3 = step(state, tick(th.ADAPT_PEER_LOST_S, through=900, last_reply=0.0), B)
    assert (d3.kind, d3.rate_kbit) == ("base", 3000)
    assert d3.reason == f"peer silent {th.ADAPT_PEER_LOST_S:.0f} s: the base"


def test_a_peer_that_never_answered_gives_the_base() -> None:
    state = State(rate_kbit=1000)
    _, d = step(state, Tick(10.0, (), 0.0, "", None), B)
    assert (d.kind, d.rate_kbit) == ("base", 3000)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.lists(st.floats(-1e4, 1e4), max_size=3),
                          st.floats(0, 1e5), st.booleans(), st.floats(0, 10)),
                max_size=60))
def test_the_rate_stays_within_its_bounds(ticks) -> None:
    state = start(B)
    now = 0.0
    for samples, through, stalled, gap in ticks:
        now += 0.01 + gap / 10
        state, d = step(state, Tick(now, tuple(samples), through, "stalled" if stalled else "",
                                    now - gap), B)
        assert B.min_kbit <= d.rate_kbit <= B.max_kbit
        assert d.rate_kbit == state.rate_kbit
