"""Deciding "faster or slower than the threshold" from paired timings on a noisy machine.

Each pair is one student call and one baseline call on the same inputs, so their ratio
cancels slow drifts of the machine. We look at the median ratio, whose confidence interval
comes from order statistics (distribution-free: no normality assumed), at a few fixed
sample sizes, and only decide when the interval clears the threshold.
"""
from __future__ import annotations

import dataclasses
import math
import statistics

LOOKS = (10, 20, 40, 80, 160)
MIN_PAIRS = LOOKS[0]  # fewer measured pairs decide nothing, and never pass
CONFIDENCE = 0.99  # per look; five looks keep the overall error rate near 5%


@dataclasses.dataclass(frozen=True)
class Interval:
    low: float
    high: float
    confidence: float


@dataclasses.dataclass(frozen=True)
class Decision:
    outcome: str  # "pass", "too_slow", "within_noise", "undecided" (keep measuring) or "too_few" (< MIN_PAIRS)
    ratio: float
    interval: Interval
    n: int


def median_interval(values: list[float], confidence: float = CONFIDENCE) -> Interval:
    """A confidence interval for the median: the k-th smallest and k-th largest values.

    k is the largest rank with P(Binomial(n, 1/2) < k) <= (1 - confidence) / 2. With too few
    values for that confidence, the range (min, max) with its own, lower coverage.
    """
    ordered = sorted(values)
    n = len(ordered)
    if n == 0:
        return Interval(math.nan, math.nan, 0.0)
    alpha = (1 - confidence) / 2
    k, below = 0, 0.0
    while k < n // 2:
        below_next = below + math.comb(n, k) / 2**n  # P(X <= k)
        if below_next > alpha:
            break
        below, k = below_next, k + 1
    if k == 0:
        return Interval(ordered[0], ordered[-1], 1 - 2 / 2**n)
    return Interval(ordered[k - 1], ordered[n - k], 1 - 2 * below)


def decide(ratios: list[float], at_most: float, margin: float, final: bool) -> Decision:
    """Pass when the whole interval is at or below the threshold (plus margin), too slow
    when it is wholly above; otherwise keep measuring, or at the end say "within noise".
    Fewer than MIN_PAIRS finite ratios are "too_few", whatever they say."""
    ratios = [r for r in ratios if math.isfinite(r)]
    interval = median_interval(ratios)
    limit = at_most * (1 + margin)
    ratio = statistics.median(ratios) if ratios else math.nan
    if len(ratios) < MIN_PAIRS:
        outcome = "too_few"
    elif interval.high <= limit:
        outcome = "pass"
    elif interval.low > limit:
        outcome = "too_slow"
    else:
        outcome = "within_noise" if final else "undecided"
    return Decision(outcome, ratio, interval, len(ratios))
