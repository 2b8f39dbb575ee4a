"""The sequential decision on paired timing ratios."""
from __future__ import annotations

import random

from grader.harness.stats import decide, median_interval


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
    assert decide(fast, at_most=1.25, margin=0.02, final=False).outcome == "pass"
    assert decide(slow, at_most=1.25, margin=0.02, final=False).outcome == "too_slow"


def test_right_at_the_threshold_stays_undecided_then_within_noise():
    rng = random.Random(2)
    at = [1.25 * rng.uniform(0.8, 1.2) for _ in range(20)]
    assert decide(at, 1.25, 0.02, final=False).outcome == "undecided"
    final = decide(at, 1.25, 0.02, final=True)
    assert final.outcome == "within_noise" and final.interval.low < 1.25 < final.interval.high and final.n == 20


def test_too_few_pairs_decide_nothing_and_never_pass():
    # decide([]) used to give a NaN interval, which fell through to "within noise": a pass.
    assert decide([], at_most=3.0, margin=0.05, final=True).outcome == "too_few"
    assert decide([0.1] * 9, at_most=3.0, margin=0.05, final=True).outcome == "too_few"
    assert decide([float("nan")] * 20, at_most=3.0, margin=0.05, final=True).outcome == "too_few"
    assert decide([0.1] * 10, at_most=3.0, margin=0.05, final=True).outcome == "pass"
