"""Re-measuring the top of a leaderboard in one interleaved session: every candidate's code
graded once per round, the rounds alternating direction (A B C, then C B A, ...), all on one
sandbox and one secret seed, so each candidate's performance cases race the same reference
on the same inputs and no candidate always runs while the machine is busier.

Each grading's ratio is already paired: the student's calls and the reference's alternate
inside its sandbox, so a slower machine slows both. The rounds take care of what pairing
cannot: drift between one candidate's grading and the next. Every grading here is a grading
like any other, the same calls in the same pattern, so no code can behave one way when it
is graded and another when it is measured again. A candidate's result is the geometric
mean of its rounds' ratios, with an interval spanning every round's: a change of load can
move one grading's ratio by more than its own interval says (pooling the rounds as
independent estimates ordered two equal codes in 1 batch of 10 in `python -m bench
verification`), so two candidates are ordered only when all their rounds keep them apart.

Why not one sandbox whose judge races every candidate's worker against one reference? The
candidates are other students: they would need a lent uid and a freezer cgroup each, so that
none can read, signal or slow another, and a sandbox lends one of each per run. Separate
gradings keep that isolation whole, and pairing inside each grading gives most of the gain.
"""
from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Sequence

from grader.contract import Kind
from grader.host.performance import overall_ratio
from grader.host.pipeline import grade
from grader.host.spec import ExerciseSpec
from sandbox import Sandbox

Ratio = tuple[float, float, float]  # (ratio, low, high)


@dataclasses.dataclass(frozen=True)
class Remeasured:
    """One candidate's new measurement over every round. ``verdict`` is ACCEPTED only when
    every round accepted; ``ratio`` is then the rounds' combination, else None."""

    key: str
    verdict: str
    ratio: Ratio | None
    positions: tuple[int, ...]  # 0-based place in each round's order
    rounds: tuple[Ratio | None, ...]  # each round's own (ratio, low, high)
    started_s: float  # seconds from the batch's start to this candidate's first grading
    wall_s: float  # seconds its gradings took, all rounds together


def rounds_combined(rounds: Sequence[Ratio]) -> Ratio:
    """The ratios' geometric mean; the interval spans every round's."""
    ratio = math.exp(sum(math.log(r) for r, _, _ in rounds) / len(rounds))
    return ratio, min(low for _, low, _ in rounds), max(high for _, _, high in rounds)


def round_order(count: int, number: int) -> list[int]:
    """Round 0 goes first to last, round 1 last to first, and so on: over an even number of
    rounds every candidate's mean place is the same."""
    order = list(range(count))
    return order[::-1] if number % 2 else order


def remeasure(
    exercise: ExerciseSpec,
    candidates: Sequence[tuple[str, str]],
    sandbox: Sandbox,
    *,
    seed: int,
    rounds: int = 2,
) -> list[Remeasured]:
    """Grade each ``(key, code)`` once per round, interleaved, every grading on ``seed``.

    Raises SandboxUnavailable when the sandbox fails; the caller retries the whole batch, so
    that the numbers it stores always come from one session.
    """
    assert rounds >= 1, "a batch measures at least one round"
    began = time.monotonic()
    # Per candidate, one (position, started_s, wall_s, verdict, ratio) for each round.
    gradings: list[list[tuple[int, float, float, str, Ratio | None]]] = [[] for _ in candidates]
    for number in range(rounds):
        for position, index in enumerate(round_order(len(candidates), number)):
            started = time.monotonic()
            verdict = grade(exercise, candidates[index][1], sandbox, seed=seed)
            accepted = verdict.verdict == Kind.ACCEPTED
            ratio = overall_ratio({"perf": verdict.perf}) if accepted else None
            gradings[index].append(
                (position, started - began, time.monotonic() - started, verdict.verdict.value, ratio)
            )
    measured = []
    for (key, _code), own in zip(candidates, gradings, strict=True):
        positions, starts, walls, verdicts, ratios = zip(*own, strict=True)
        failed = next((v for v in verdicts if v != Kind.ACCEPTED.value), None)
        timed = [r for r in ratios if r is not None]
        measured.append(
            Remeasured(
                key=key,
                verdict=failed or Kind.ACCEPTED.value,
                ratio=rounds_combined(timed) if failed is None and len(timed) == rounds else None,
                positions=positions,
                rounds=ratios,
                started_s=round(starts[0], 3),
                wall_s=round(sum(walls), 3),
            )
        )
    return measured
