"""Re-measuring the top of a leaderboard in one session: the candidates' code graded back to
back, in one process, on one sandbox, on the same secret seed (so every candidate's
performance cases race the same reference on the same inputs).

This is the host-side batch. A true single sandbox run, with the candidates' calls
interleaved round by round against one reference, needs one lent uid and one freezer cgroup
per candidate (so that one candidate cannot read, signal or slow another); the sandbox lends
one of each per run today. Until it lends more, the batch is sequential, and the caller
alternates the order from one batch to the next so that no place in the order is always
first (or last) on a machine whose load drifts.
"""
from __future__ import annotations

import dataclasses
import time
from collections.abc import Sequence

from grader.contract import Kind
from grader.host.performance import overall_ratio
from grader.host.pipeline import grade
from grader.host.spec import ExerciseSpec
from sandbox import Sandbox


@dataclasses.dataclass(frozen=True)
class Remeasured:
    """One candidate's new measurement; ``ratio`` is (ratio, low, high), None when the code
    was not accepted this time or timed nothing."""

    key: str
    verdict: str
    ratio: tuple[float, float, float] | None
    position: int  # 0-based place in this batch's order
    started_s: float  # seconds since the batch began
    wall_s: float


def remeasure(
    exercise: ExerciseSpec, candidates: Sequence[tuple[str, str]], sandbox: Sandbox, *, seed: int
) -> list[Remeasured]:
    """Grade each ``(key, code)`` in the order given, back to back, every one on ``seed``.

    Raises SandboxUnavailable when the sandbox fails; the caller retries the whole batch, so
    that the numbers it stores always come from one session.
    """
    began = time.monotonic()
    measured = []
    for position, (key, code) in enumerate(candidates):
        started = time.monotonic()
        verdict = grade(exercise, code, sandbox, seed=seed)
        ratio = overall_ratio({"perf": verdict.perf}) if verdict.verdict == Kind.ACCEPTED else None
        measured.append(
            Remeasured(
                key=key,
                verdict=verdict.verdict.value,
                ratio=ratio,
                position=position,
                started_s=round(started - began, 3),
                wall_s=round(time.monotonic() - started, 3),
            )
        )
    return measured
