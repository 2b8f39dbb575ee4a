"""The sequential decision on paired timing ratios, with injected timings and an injected clock:
nothing here depends on how busy the machine is (real timings are the benchmark's)."""
from __future__ import annotations

import itertools
import random

from grader.harness.stats import (
    LOOKS,
    MIN_PAIRS,
    PROCESS_SPREAD,
    TICK_S,
    CpuBeyondWall,
    decide,
    median_interval,
    run,
    settle,
)


def test_the_interval_covers_the_median_about_as_often_as_it_claims():
    rng = random.Random(7)
    misses = 0
    for _ in range(400):
        sample = [rng.lognormvariate(0, 0.3) for _ in range(40)]  # true median 1.0
        interval = median_interval(sample)
        misses += not interval.low <= 1.0 <= interval.high
    assert interval.confidence >= 0.99 and misses <= 12  # 1% expected, generous slack


def test_clearly_faster_passes_and_clearly_slower_fails():
    rng = random.Random(1)
    fast = [0.8 * rng.uniform(0.95, 1.05) for _ in range(10)]
    slow = [1.6 * rng.uniform(0.95, 1.05) for _ in range(10)]
    assert decide(fast, at_most=1.25, margin=0.02).outcome == "pass"
    assert decide(slow, at_most=1.25, margin=0.02).outcome == "too_slow"


def test_an_interval_across_the_threshold_is_never_a_pass_until_the_median_settles_it():
    rng = random.Random(2)
    at = [1.25 * rng.uniform(0.8, 1.2) for _ in range(20)]
    undecided = decide(at, 1.25, 0.02)
    assert undecided.outcome == "undecided" and undecided.interval.low < 1.25 < undecided.interval.high
    settled = settle(undecided, 1.25, 0.02)
    assert settled.settled and settled.outcome == ("pass" if undecided.ratio <= 1.25 * 1.02 else "too_slow")
    assert settle(decide([0.5] * 10, 1.25, 0.02), 1.25, 0.02).settled is False  # a decision stays as it was


def test_the_under_load_case_from_the_issue_is_not_a_pass():
    # ratio 8.28 with an interval of 0.55 to 19.2 (n = 10): "within noise" passed it on main.
    noisy = [0.55, 1.2, 3.0, 6.5, 8.0, 8.5, 9.0, 12.0, 15.0, 19.2]
    decision = decide(noisy, at_most=3.0, margin=0.05)
    assert decision.outcome == "undecided"
    assert settle(decision, 3.0, 0.05).outcome == "too_slow"


def test_too_few_pairs_decide_nothing_and_never_pass():
    # decide([]) used to give a NaN interval, which fell through to "within noise": a pass.
    assert decide([], at_most=3.0, margin=0.05).outcome == "too_few"
    assert decide([0.1] * 9, at_most=3.0, margin=0.05).outcome == "too_few"
    assert decide([float("nan")] * 20, at_most=3.0, margin=0.05).outcome == "too_few"
    assert settle(decide([0.1] * 9, 3.0, 0.05), 3.0, 0.05).outcome == "too_few"
    assert decide([0.1] * 10, at_most=3.0, margin=0.05).outcome == "pass"


def test_an_interval_wholly_on_one_side_of_the_threshold_and_margin_decides():
    # The line is 3.15 (3x plus 5 %); a decision allows PROCESS_SPREAD (4 %) on each side of the
    # interval, so a tight interval passes up to 3.15 / 1.04 = 3.029 and is too slow from 3.276.
    assert PROCESS_SPREAD == 0.04
    for low, wanted in ((2.0, "pass"), (2.9, "pass"), (3.0, "pass"), (3.03, "undecided"), (3.16, "undecided"),
                        (3.27, "undecided"), (3.28, "too_slow"), (4.0, "too_slow")):
        values = [low + (0.149 if wanted == "too_slow" else 0.0) * i / 39 for i in range(40)]
        assert decide(values, at_most=3.0, margin=0.05).outcome == wanted, low


class FakeClock:
    """Each pair advances it by the pair's own seconds, as real calls would."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def race(ratios, *, budget_s=10.0, seconds_per_pair=0.1, settle_undecided=False, at_most=3.0, margin=0.05):
    clock = FakeClock()
    source = iter(ratios)

    def pair() -> tuple[float, float]:
        clock.now += seconds_per_pair
        return next(source) * 0.01, 0.01

    return run(pair, budget_s=budget_s, at_most=at_most, margin=margin, settle_undecided=settle_undecided,
               clock=clock)


def test_a_clear_case_stops_at_the_first_look():
    measured = race(itertools.repeat(1.0))
    assert (measured.decision.outcome, measured.decision.n) == ("pass", LOOKS[0])


def test_a_straddling_interval_keeps_measuring_until_it_settles():
    rng = random.Random(5)
    # True ratio 2.7 under a threshold of 3.0: wide at first, settled once enough pairs narrow it.
    measured = race((2.7 * rng.lognormvariate(0, 0.25) for _ in itertools.count()), budget_s=100.0)
    assert measured.decision.outcome == "pass" and measured.decision.n > LOOKS[0]


def test_a_budget_that_ends_undecided_says_so_and_only_the_last_attempt_settles():
    alternating = [1.0, 9.0] * 200  # the median sits at the threshold's side of nowhere
    first = race(alternating, budget_s=2.0)
    assert first.decision.outcome == "undecided" and first.decision.n == 20  # 2 s at 0.1 s a pair
    last = race(alternating, budget_s=2.0, settle_undecided=True)
    assert last.decision.settled and last.decision.outcome == "too_slow"  # median 5.0 > 3.15


def test_calls_slow_on_purpose_now_and_then_are_not_hidden_by_the_median():
    # Red team round 9: 15x on one call in three, 1x on the others: median 1.0, average 5.7x.
    first = race(itertools.cycle([1.0, 1.0, 15.0]))
    assert first.decision.outcome == "undecided" and first.decision.median == 1.0
    last = race(itertools.cycle([1.0, 1.0, 15.0]), settle_undecided=True)
    assert last.decision.outcome == "too_slow" and last.decision.ratio > 5.5
    # Honest code ranks by its median where its total agrees.
    honest = race(itertools.cycle([0.9, 1.0, 1.1]))
    assert honest.decision.outcome == "pass" and honest.decision.ratio == 1.0


def test_a_fast_student_behind_a_slow_baseline_still_gets_its_minimum_pairs():
    measured = race(itertools.repeat(0.5), budget_s=0.5, seconds_per_pair=0.2)  # 3 pairs fit the budget
    assert measured.decision.n == MIN_PAIRS and measured.decision.outcome == "pass"


def decided(true_ratio: float, sigma: float, trial: int) -> str:
    """One grading under log-normal noise of width ``sigma``: a first attempt, and the last if needed."""
    rng = random.Random(trial * 1000 + int(true_ratio * 100) + int(sigma * 10))
    noise = (true_ratio * rng.lognormvariate(0, sigma) for _ in itertools.count())
    decision = race(noise, budget_s=4.0).decision
    if decision.outcome == "undecided":
        decision = race(noise, budget_s=4.0, settle_undecided=True).decision
    return decision.outcome


def test_slow_code_is_never_accepted_and_right_code_never_refused_under_noise():
    """The threshold is 3x with a 5 % margin. Noise as wide as a loaded machine's wall clock
    (sigma 0.6) and as a CPU clock's (sigma 0.05), 40 gradings each. Seeded: the
    same numbers on every machine."""
    for sigma in (0.05, 0.6):
        for true_ratio, wanted in ((1.0, "pass"), (2.0, "pass"), (4.0, "too_slow"), (8.0, "too_slow")):
            outcomes = [decided(true_ratio, sigma, trial) for trial in range(40)]
            assert set(outcomes) == {wanted}, (sigma, true_ratio, outcomes)
    # Right at the limit, the margin absorbs a CPU clock's noise.
    assert {decided(3.0, 0.05, trial) for trial in range(40)} == {"pass"}


# -- the CPU beyond the wall clock, where the wall clock decides (gVisor): injected ticks --------


def _ticks(cpu_s: float, rng: random.Random) -> float:
    """What a clock tick counter reads for cpu_s of CPU: whole ticks, the next one with the
    chance of the remainder (the count is right on average, never per window)."""
    whole, rest = divmod(cpu_s, TICK_S)
    return (whole + (rng.random() < rest / TICK_S)) * TICK_S


def test_short_calls_in_one_task_are_not_charged_a_tick_each():
    rng = random.Random(3)
    pooled = CpuBeyondWall()
    extras = []
    for _ in range(80):  # 4 ms calls, 5 ms of wall with the exchange: each reads 0 or 10 ms
        pooled.add(0.005, _ticks(0.004, rng))
        extras.append(pooled.extra_s())
    assert extras == [0.0] * 80


def test_two_tasks_working_side_by_side_are_charged_their_cpu():
    rng = random.Random(4)
    pooled = CpuBeyondWall()
    for _ in range(40):  # 9 ms each, in two processes at once: 18 ms of CPU in 9 ms of wall
        pooled.add(0.009, _ticks(0.009, rng) + _ticks(0.009, rng))
    # Charged what the ticks make sure of: most of the 9 ms beyond the wall, never more.
    assert 0.8 * 0.018 <= 0.009 + pooled.extra_s() <= 0.018


def test_one_long_wait_does_not_drown_the_cpu_of_the_other_windows():
    rng = random.Random(5)
    pooled = CpuBeyondWall()
    pooled.add(2.0, 0.0)  # a window that sleeps 2 s: its own wall time charges it
    for _ in range(40):
        pooled.add(0.009, _ticks(0.009, rng) + _ticks(0.009, rng))
    assert 0.009 + pooled.extra_s() >= 0.8 * 0.018


def test_one_window_proves_nothing():
    pooled = CpuBeyondWall()
    assert pooled.extra_s() == 0.0
    pooled.add(0.009, 0.05)
    assert pooled.extra_s() == 0.0
