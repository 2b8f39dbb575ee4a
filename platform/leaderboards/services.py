"""Best-per-student rows, updated where a verdict is stored; regrades of stale entries."""

from __future__ import annotations

import hashlib

from django.db import transaction
from django.utils import timezone

from accounts.models import User
from catalog.models import Exercise
from grader.host.performance import overall_ratio
from grading.models import Submission
from grading.services import submission_resubmit
from leaderboards.board_cache import ranking_forget
from leaderboards.models import FULL_SCORE, POOL_SIZE, Entry
from leaderboards.verification import reaches_the_top, verification_request

__all__ = [
    "FULL_SCORE",
    "code_digest",
    "entry_hold",
    "entry_record",
    "entry_release",
    "pooled",
    "stale_entries_regrade",
]


def code_digest(code: str) -> str:
    """Line endings and trailing blanks do not make code different."""
    normal = "\n".join(line.rstrip() for line in code.replace("\r\n", "\n").strip().split("\n"))
    return hashlib.sha256(normal.encode()).hexdigest()


def pooled(measurements: list[list[float]]) -> tuple[float, float, float]:
    """The board's numbers for one code measured several times: the upper median of the
    measurements' ratios, of their low ends and of their high ends.

    Each grading is one draw of the same code's speed on a machine whose load changes, and the
    student sees every draw and chooses when to stop submitting (optimal stopping: the latest
    draw can be the luckiest). A median of the pool moves by at most one place per new draw,
    so a lucky one is outvoted by the rest, and more draws only settle it. With an even count
    the slower of the two middle values counts: a second draw of one code never improves on
    the first by luck alone. The ends are medians too, so the interval is a typical grading's
    interval, not the union (which only widens with every draw) nor the narrowest (as lucky
    as the luckiest); it holds the ratio, since every grading's interval holds its own. It
    does not shrink like 1/sqrt(n) either: gradings hours apart differ by the machine's load,
    which more gradings of the same code on the same machine do not average away, so a
    narrower interval would claim a precision the board does not have."""
    middle = len(measurements) // 2
    ratio, low, high = (sorted(m[i] for m in measurements)[middle] for i in range(3))
    return ratio, min(low, ratio), max(high, ratio)


def _better(score: float, ratio: float | None, high: float | None, than: Entry) -> bool:
    """A higher score, or at a full score a grading clearly faster than the entry's: its
    interval ends below the entry's (stricter than the board's rule). A grading within the noise
    of the entry's does not move it, so resubmitting the same code with a comment changed
    cannot keep the luckiest measurement (the red team's re-roll after issue 22)."""
    if score != than.score:
        return score > than.score
    if score >= FULL_SCORE and ratio is not None and than.ratio is not None:
        if high is not None and than.ratio_low is not None:
            return high < than.ratio_low
        return ratio < than.ratio
    return False


def entry_record(submission: Submission) -> None:
    """Keep the student's best code for this exercise, with its numbers pooled over every
    counted grading of that code (a stored verdict: GRADED, neither FAILED nor measuring
    again). The same code graded again adds its measurement to the pool and the entry shows
    the pool's median (never the luckiest, nor simply the latest, of several); other code
    replaces it when it is better and starts a pool of its own; any grading replaces an entry
    withdrawn from the ranking (its code failed a re-measurement)."""
    version = submission.exercise_version
    score = submission.score or 0.0
    perf = overall_ratio(submission.result) if score >= FULL_SCORE else None
    ratio, low, high = perf or (None, None, None)
    digest = code_digest(submission.code)
    pool: list[list[float]] = [list(perf)] if perf else []
    fields = dict(
        exercise_version_id=version.id,
        submission_id=submission.id,
        code_digest=digest,
        score=score,
        ratio=ratio,
        ratio_low=low,
        ratio_high=high,
        pool=pool,
        achieved_at=submission.created_at,
        # New code has not been re-measured with the rest of the top.
        verification_id=None,
        verified_at=None,
        withdrawn_at=None,  # graded again: back on the ranking
    )
    Entry.objects.bulk_create(
        [Entry(user_id=submission.user_id, exercise_id=version.exercise_id, **fields)], ignore_conflicts=True
    )
    entry = (
        # of=self: locking the joined version row too (Postgres's default) deadlocked with
        # submits, whose foreign-key check takes a key-share lock on that row at commit.
        Entry.objects.select_for_update(of=("self",))
        .select_related("exercise_version")
        .get(user_id=submission.user_id, exercise_id=version.exercise_id)
    )
    previous = entry.exercise_version_id
    if entry.submission_id == submission.id:
        replace = True  # just created, or its own regrade
    elif entry.exercise_version_id != version.id:
        replace = version.number > entry.exercise_version.number  # a newer version supersedes
    elif entry.withdrawn_at is not None:
        replace = True  # its code has no honest measurement any more
    elif entry.code_digest == digest:
        replace = True  # the same code again: one more draw for its pool
    else:
        replace = _better(score, ratio, high, entry)
    if replace:
        if entry.code_digest == digest and previous == version.id and entry.submission_id != submission.id:
            # The same code again: its pool grows (a partial score keeps it for the next full one).
            # A regrade of the entry's own submission starts afresh: that grading replaces itself.
            pool = [*entry.pool, *pool][-POOL_SIZE:]
            fields["pool"] = pool
            if perf:
                fields["ratio"], fields["ratio_low"], fields["ratio_high"] = pooled(pool)
        for name, value in fields.items():
            setattr(entry, name, value)
        entry.save()
        ranking_forget(version.id, *([previous] if previous != version.id else []))
        if reaches_the_top(entry):
            verification_request(version.id)


def stale_entries_regrade(exercise: Exercise) -> list[int]:
    """Submit every stale entry's code again under the current version (graded in the
    background); returns the new submissions' ids, whose progress the board shows."""
    current = exercise.current_version
    if current is None:
        return []
    stale = Entry.objects.filter(exercise=exercise).exclude(exercise_version=current.id)
    queued = []
    with transaction.atomic():
        for entry in stale.select_related("user", "submission"):
            code = entry.submission.code
            # Idempotent: the same code already sent under this version is not sent twice.
            if not Submission.objects.filter(
                user=entry.user, exercise_version=current.id, code=code
            ).exists():
                # The platform's resubmission: no student limit refuses it, and it keeps the
                # time the code was handed in (an assignment pinned to the new version counts it so).
                queued.append(submission_resubmit(original=entry.submission, version=current).id)
    return queued


def entry_hold(entry: Entry, *, by: User) -> None:
    """Take an entry off the ranking of every board until it is released (held for review)."""
    Entry.objects.filter(id=entry.id, held_at__isnull=True).update(held_at=timezone.now(), held_by=by)
    ranking_forget(entry.exercise_version_id)


def entry_release(entry: Entry) -> None:
    """Put a held entry back on the ranking."""
    Entry.objects.filter(id=entry.id).update(held_at=None, held_by=None)
    ranking_forget(entry.exercise_version_id)
