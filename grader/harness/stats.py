"""Deciding "faster or slower than the threshold" from paired timings on a noisy machine.

Each pair is one student call and one baseline call on the same inputs, so their ratio
cancels slow drifts of the machine. We look at the median ratio, whose confidence interval
comes from order statistics (distribution-free: no normality assumed), at a few fixed
sample sizes, and only decide when the interval clears the threshold:

- pass when the whole interval, widened by the spread between processes (PROCESS_SPREAD), is at
  or below the threshold plus its margin;
- too slow when the whole interval is above it;
- otherwise undecided: keep measuring while the budget lasts, as more pairs narrow the
  interval. The margin is slack in the student's favour: code right at the threshold passes
  once its interval is narrower than the margin.

A pass also needs the ratio of the two sides' total times at or below the threshold plus its
margin. The median alone hides calls that are slow on purpose: code 15x slower on one call in
three passed at 1.03x, its average call 5.7x (red team round 9). The ratio of totals has no
such blind spot; it is what a user of the code waits for. A case ranks by the larger of the two.

An interval that is still undecided when the budget ends is never a pass by default: it is
reported as "undecided", and the platform measures again later. Only on that last attempt
(``settle``) does that larger ratio itself decide, against the threshold plus its margin.
"""
from __future__ import annotations

import dataclasses
import math
import statistics
import time
from collections.abc import Callable

LOOKS = (10, 20, 40, 80, 160)
# The pairs of one grading come from one student worker and one baseline worker, and the same
# code runs a few percent faster or slower in one process than in another (where its memory
# landed, which cores it ran on), for the whole grading: an interval over the pairs cannot see
# that. Reference-speed code graded in fresh workers measured 0.97x-1.02x, and a 3x solution
# at the limit (median 3.01x) was decided too slow without a second look in 3 of 40 gradings.
# So a decision allows this much more on each side of the interval (the verdict still shows the
# interval as measured).
PROCESS_SPREAD = 0.04
MIN_PAIRS = LOOKS[0]  # fewer measured pairs decide nothing, and never pass
CONFIDENCE = 0.99  # per look; five looks keep the overall error rate near 5%
MAX_OVERRUN = 4  # budgets a race may take to reach MIN_PAIRS while the student is fast


@dataclasses.dataclass(frozen=True)
class Interval:
    low: float
    high: float
    confidence: float


@dataclasses.dataclass(frozen=True)
class Decision:
    # "pass", "too_slow", "undecided" (the interval straddles the threshold, or the totals'
    # ratio is above it while the interval is not) or "too_few" (< MIN_PAIRS). ``settled``
    # says ``ratio`` decided it, on a last attempt.
    outcome: str
    median: float
    total_ratio: float
    interval: Interval
    n: int
    settled: bool = False

    @property
    def ratio(self) -> float:
        """The ratio that counts: the larger of the median and the totals' ratio."""
        return max(self.median, self.total_ratio)


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


def decide(ratios: list[float], at_most: float, margin: float, total_ratio: float | None = None) -> Decision:
    """Pass when the whole interval, widened by PROCESS_SPREAD, is at or below the threshold
    plus its margin and so is ``total_ratio`` (the student's total time over the baseline's, where
    known); too slow when the interval is wholly above that; otherwise undecided. Fewer than
    MIN_PAIRS finite ratios are "too_few", whatever they say."""
    ratios = [r for r in ratios if math.isfinite(r)]
    interval = median_interval(ratios)
    median = statistics.median(ratios) if ratios else math.nan
    totals = total_ratio if total_ratio is not None and math.isfinite(total_ratio) else median
    limit = at_most * (1 + margin)
    if len(ratios) < MIN_PAIRS:
        outcome = "too_few"
    elif interval.high * (1 + PROCESS_SPREAD) <= limit and totals <= limit:
        outcome = "pass"
    elif interval.low / (1 + PROCESS_SPREAD) > limit:
        outcome = "too_slow"
    else:
        outcome = "undecided"
    return Decision(outcome, median, totals, interval, len(ratios))


def settle(decision: Decision, at_most: float, margin: float) -> Decision:
    """The last attempt's rule for a case that never settled: the ratio that counts decides."""
    if decision.outcome != "undecided":
        return decision
    outcome = "pass" if decision.ratio <= at_most * (1 + margin) else "too_slow"
    return dataclasses.replace(decision, outcome=outcome, settled=True)


@dataclasses.dataclass(frozen=True)
class Race:
    """How a sequence of pairs went: the decision, the pairs (student s, baseline s), the time."""

    decision: Decision
    pairs: list[tuple[float, float]]
    elapsed_s: float


def run(
    pair: Callable[[], tuple[float, float]],
    *,
    budget_s: float,
    at_most: float,
    margin: float,
    settle_undecided: bool,
    own_time: Callable[[], float] = lambda: 0.0,
    clock: Callable[[], float] = time.monotonic,
) -> Race:
    """Measure pairs until a look decides or the budget ends; the whole sequential procedure.

    ``pair()`` times one student call and one baseline call; ``own_time()`` is the student's
    own seconds so far. The budget bounds the measured pairs; when fewer than MIN_PAIRS fit
    in it, measuring goes on while the student's own time stays under the budget, up to
    MAX_OVERRUN budgets in all (a slow baseline must not cost a fast student its verdict).
    Timings and clock come in as functions, so the rule is tested with injected numbers.
    """
    started = clock()
    pairs: list[tuple[float, float]] = []

    def may_measure(look: int) -> bool:
        elapsed = clock() - started
        if len(pairs) >= look:
            return False
        if elapsed < budget_s:
            return True
        return len(pairs) < MIN_PAIRS and own_time() < budget_s and elapsed < MAX_OVERRUN * budget_s

    decision = decide([], at_most, margin)
    for look in LOOKS:
        while may_measure(look):
            pairs.append(pair())
        decision = decide([s / b for s, b in pairs if b > 0], at_most, margin, total_ratio(pairs))
        if decision.outcome != "undecided" or clock() - started >= budget_s:
            break
    if settle_undecided:
        decision = settle(decision, at_most, margin)
    return Race(decision, pairs, clock() - started)


def total_ratio(pairs: list[tuple[float, float]]) -> float:
    """The student's total time over the baseline's (nan with no baseline time)."""
    baseline = sum(b for _, b in pairs)
    return sum(s for s, _ in pairs) / baseline if baseline > 0 else math.nan


# Where the wall clock times a side's calls (gVisor shows per-task CPU only in clock ticks), the
# CPU its processes were seen to use beyond it, pooled over a case's windows.
TICK_S = 0.01  # a clock tick (USER_HZ = 100): the grain of /proc/<pid>/stat's CPU times
CPU_BEYOND_WALL_Z = 1.64  # one-sided 95%: a side is charged for work beside the wall clock once it is sure


class CpuBeyondWall:
    """How much more CPU than wall time a side's processes use per window, where the ticks
    prove it: the seconds that each wall time of that side is charged on top.

    The wall clock is no upper bound of the CPU that tasks working side by side use (two
    processes burning 9 ms each answer in 9 ms), but the CPU shows only in ticks of 10 ms, and
    one window's count is too coarse to time a call of a few milliseconds: a 4 ms call reads 0
    or 10 ms, so taking the larger of the two per window would charge honest short calls a
    whole tick. Pooled, the ticks add up to the CPU used: the windows' mean CPU beyond their wall
    time, less 1.64 standard errors (the windows' own spread, and never under half a tick, the
    ticks' own grain), is what is sure; ``extra_s()`` is that, and 0 for code that works in one
    task at a time, which the wall clock already covers. A window counts as at most one tick
    under its wall time: one long wait (which its own wall time charges) cannot drown the CPU
    of all the others."""

    def __init__(self) -> None:
        self.beyond: list[float] = []

    def add(self, wall_s: float, ticks_cpu_s: float) -> None:
        self.beyond.append(max(ticks_cpu_s - wall_s, -TICK_S))

    def extra_s(self) -> float:
        n = len(self.beyond)
        if n < 2:
            return 0.0
        spread = max(statistics.stdev(self.beyond), TICK_S / 2)
        return max(0.0, statistics.fmean(self.beyond) - CPU_BEYOND_WALL_Z * spread / math.sqrt(n))
