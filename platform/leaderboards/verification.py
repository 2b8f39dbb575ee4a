"""Re-measuring the top of an exercise's board in one session, so that the order at the top
does not come from gradings made hours apart on a machine whose load changed in between.

A request (after a new best reaches the top, or from beat when a board is due) makes one
PENDING Verification per version; requests while it waits join it (debounce). The task
claims it with a conditional UPDATE (a redelivered task finds it taken and returns), grades
the top entries' code again, interleaved over LEADERBOARD_VERIFY_ROUNDS rounds on one
sandbox and one seed (grader.host.remeasure), alternating the first round's direction from
one batch to the next, and stores the new ratios and intervals in one transaction. The board
then ranks them with the usual rule (leaderboards.selectors): entries no one separates share a rank.

No submission is stored and the student's attempts do not change. Each grading here is a
grading like any other (correctness included): an entry whose code is not accepted this time
(wrong, too slow, crashed, timed out) is withdrawn from the ranking until a grading of the
student replaces it, and the batch records what happened. A platform fault (the sandbox
unavailable, an INTERNAL_ERROR of any candidate) says nothing about the code and changes
nothing: the batch is a job of the one job path (grading.jobs), retried whole and, when the
retries run out, stored FAILED.
"""

from __future__ import annotations

import logging
import secrets
from datetime import datetime, timedelta

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import F, Q, QuerySet
from django.utils import timezone

from catalog.models import Exercise, ExerciseVersion
from courses.models import Course, Membership
from courses.selectors import student_ids
from grader.contract import Kind
from grader.host import Remeasured, Sandbox, remeasure
from grading.dispatch import version_queue
from grading.exercises import exercise_version_spec
from grading.jobs import Claim, Job, JobKind, Outcome, PlatformFault, Progress, job_run, job_send, jobs_sweep
from grading.sandboxes import grading_sandbox
from leaderboards.board_cache import ranking_forget
from leaderboards.models import FULL_SCORE, POOL_SIZE, Entry, Verification

log = logging.getLogger(__name__)
VERIFY_TASK = "leaderboards.tasks.verify_top"  # sent by name: the task module imports this one
BOARD_ORDER = (F("ratio").asc(), "achieved_at", "id")  # among full scores with a ratio, as the board lists them


def timed(version_id: int) -> QuerySet[Entry]:
    """The board's timed full scores in board order (hidden students too: course boards show them)."""
    return Entry.objects.filter(
        exercise_version_id=version_id,
        score__gte=FULL_SCORE,
        ratio__isnull=False,
        ratio_low__isnull=False,
        withdrawn_at__isnull=True,
    ).order_by(*BOARD_ORDER)


def timed_top(version_id: int, n: int) -> QuerySet[Entry]:
    return timed(version_id)[:n]


def _course_students(exercise_id: int, *, of: int | None = None) -> list[list[int]]:
    """The students of each course that sets this exercise (only the courses where user ``of``
    is a student, when given)."""
    courses = Course.objects.filter(assignments__items__exercise_version__exercise_id=exercise_id)
    if of is not None:
        courses = courses.filter(memberships__user_id=of, memberships__role=Membership.Role.STUDENT)
    return [student_ids(course) for course in courses.distinct().order_by("id")]


def verification_candidates(version: ExerciseVersion) -> list[Entry]:
    """The site board's top LEADERBOARD_VERIFY_TOP and the top LEADERBOARD_VERIFY_COURSE_TOP
    of each course board of the exercise (a course's best need not be among the site's), at
    most LEADERBOARD_VERIFY_MAX in all, courses taken in turns (every course's first before
    any course's second); in board order."""
    chosen = {e.id: e for e in timed_top(version.id, settings.LEADERBOARD_VERIFY_TOP).select_related("submission")}
    course_tops = [
        list(timed(version.id).filter(user_id__in=students).select_related("submission")
             [: settings.LEADERBOARD_VERIFY_COURSE_TOP])
        for students in _course_students(version.exercise_id)
    ]
    for place in range(settings.LEADERBOARD_VERIFY_COURSE_TOP):
        for top in course_tops:
            if place < len(top) and len(chosen) < settings.LEADERBOARD_VERIFY_MAX:
                chosen.setdefault(top[place].id, top[place])
    return sorted(chosen.values(), key=lambda e: (e.ratio, e.achieved_at, e.id))


def reaches_the_top(entry: Entry) -> bool:
    """Would this (new best) entry be among the re-measured, on the site board or on the board
    of a course it belongs to? A bounded count per board."""
    if entry.score < FULL_SCORE or entry.ratio is None or entry.ratio_low is None:
        return False
    ahead = timed(entry.exercise_version_id).filter(ratio__lt=entry.ratio)
    n = settings.LEADERBOARD_VERIFY_TOP
    if ahead[:n].count() < n:
        return True
    n = settings.LEADERBOARD_VERIFY_COURSE_TOP
    return any(
        ahead.filter(user_id__in=students)[:n].count() < n
        for students in _course_students(entry.exercise_id, of=entry.user_id)
    )


def verification_request(version_id: int, *, delay_s: float | None = None) -> Verification | None:
    """Ask for the top of this version's board to be re-measured; returns the new PENDING
    batch, or None when one is already waiting (this request joins it)."""
    if Verification.objects.filter(exercise_version_id=version_id, status=Verification.Status.PENDING).exists():
        return None
    try:
        with transaction.atomic():  # a savepoint: the verdict transaction around us goes on
            batch = Verification.objects.create(exercise_version_id=version_id)
    except IntegrityError:  # another request made the pending one first
        return None
    delay = settings.LEADERBOARD_VERIFY_DEBOUNCE_S if delay_s is None else delay_s
    transaction.on_commit(lambda: verification_send(batch, countdown=delay))
    return batch


VERIFICATION_JOB = JobKind(
    name="verification",
    model=Verification,
    task=VERIFY_TASK,
    queued=Verification.Status.PENDING,
    running=Verification.Status.RUNNING,
    progress={
        Verification.Status.PENDING: Progress.QUEUED,
        Verification.Status.RUNNING: Progress.RUNNING,
        Verification.Status.DONE: Progress.DONE,
        Verification.Status.SUPERSEDED: Progress.DONE,
        Verification.Status.FAILED: Progress.FAILED,  # a fault of ours (logged); the next request measures again
    },
    failed=lambda fault: {"status": Verification.Status.FAILED},
    # A batch grades its candidates ROUNDS times, one after the other: capped at that many gradings.
    max_s=lambda: (settings.LEADERBOARD_VERIFY_MAX * settings.LEADERBOARD_VERIFY_ROUNDS + 1)
    * settings.SUBMISSION_STALE_AFTER_S,
    queue=lambda batch_id: version_queue(Verification, batch_id),
    superseded=Verification.Status.SUPERSEDED,  # a newer request is waiting already: that one will measure
)


def verification_send(batch: Verification, countdown: float = 0) -> bool:
    """Publish the task; False (logged) when the broker cannot take it now (the sweep resends)."""
    return job_send(VERIFICATION_JOB, batch.id, countdown=countdown)


def verification_run(
    batch_id: int, *, sandbox: Sandbox | None = None, final_attempt: bool = True
) -> Verification | None:
    """Run one batch if it is still pending (idempotent: None when it was not run here). A
    platform fault puts it back, so that the retry measures all candidates in one session again."""
    claim = job_run(VERIFICATION_JOB, batch_id, lambda job: _measure(job, sandbox), final_attempt=final_attempt)
    return Verification.objects.get(id=batch_id) if claim is Claim.TAKEN else None


def _measure(job: Job, sandbox: Sandbox | None) -> Outcome:
    batch = Verification.objects.select_related("exercise_version__exercise").get(id=job.id)
    version = batch.exercise_version
    if version.exercise.current_version_id != version.id:
        return Outcome({"status": Verification.Status.SUPERSEDED})
    entries = verification_candidates(version)
    previous = (
        Verification.objects.filter(exercise_version=version, status=Verification.Status.DONE)
        .order_by("-finished_at", "-id")
        .values_list("reversed_order", flat=True)
        .first()
    )
    reverse = previous is False  # alternate: top-down, then bottom-up, then top-down...
    if reverse:
        entries.reverse()
    seed = secrets.randbits(62)
    measured = remeasure(
        exercise_version_spec(version),
        [(str(e.id), e.submission.code) for e in entries],
        sandbox or grading_sandbox(),
        seed=seed,
        rounds=settings.LEADERBOARD_VERIFY_ROUNDS,
    )
    if faults := [m.key for m in measured if m.verdict == Kind.INTERNAL_ERROR.value]:
        raise PlatformFault(f"INTERNAL_ERROR re-measuring entries {', '.join(faults)}")
    return measured_outcome(batch, entries, measured, seed=seed, reverse=reverse)


def measured_outcome(
    batch: Verification, entries: list[Entry], measured: list[Remeasured], *, seed: int, reverse: bool
) -> Outcome:
    """The new numbers, stored with the batch in one transaction: the board never shows half a
    batch; nothing when the batch was reclaimed from this attempt meanwhile (its lease lapsed)."""
    now = timezone.now()  # the batch's end is when its entries were verified

    def entries_store() -> None:
        by_id = {e.id: e for e in entries}
        current = {e.id: e for e in Entry.objects.select_for_update().filter(id__in=by_id)}
        rows = []
        for m in measured:
            graded, entry = by_id[int(m.key)], current.get(int(m.key))
            # New code (or a new version) replaced the entry while we measured: its own grading stands.
            unchanged = entry is not None and (entry.submission_id, entry.exercise_version_id) == (
                graded.submission_id,
                graded.exercise_version_id,
            )
            stored = unchanged and m.ratio is not None
            withdrawn = unchanged and m.verdict not in (Kind.ACCEPTED.value, Kind.INTERNAL_ERROR.value)
            rows.append(
                {
                    "entry": graded.id,
                    "user": graded.user_id,
                    "positions": list(m.positions),
                    "verdict": m.verdict,
                    "before": [graded.ratio, graded.ratio_low, graded.ratio_high],
                    "after": list(m.ratio) if m.ratio else None,
                    "rounds": [list(r) if r else None for r in m.rounds],
                    "stored": stored,
                    "withdrawn": withdrawn,
                    "started_s": m.started_s,
                    "wall_s": m.wall_s,
                }
            )
            if stored and entry is not None and m.ratio is not None:
                # The board shows the session's numbers (the top ordered by one session), and
                # the code's pool keeps them as one more draw for its next grading's median.
                entry.ratio, entry.ratio_low, entry.ratio_high = m.ratio
                entry.pool = [*entry.pool, list(m.ratio)][-POOL_SIZE:]
                entry.verification_id, entry.verified_at = batch.id, now
                entry.save(update_fields=["ratio", "ratio_low", "ratio_high", "pool", "verification", "verified_at"])
            elif withdrawn and entry is not None:
                log.warning("entry %s withdrawn from the ranking: re-measured %s", entry.id, m.verdict)
                entry.withdrawn_at = now
                entry.save(update_fields=["withdrawn_at"])
        Verification.objects.filter(id=batch.id).update(candidates=rows)
        ranking_forget(batch.exercise_version_id)

    return Outcome({"status": Verification.Status.DONE, "finished_at": now, "seed": seed, "reversed_order": reverse},
                   also=entries_store)


def verifications_sweep(now: datetime | None = None) -> dict[str, int]:
    """Beat: resend batches whose message was lost, reclaim ones whose worker died, and ask
    for every board whose last re-measuring is older than LEADERBOARD_VERIFY_EVERY_S."""
    now = now or timezone.now()
    counts = {"resent": 0, "reclaimed": 0, "requested": 0}
    lost_before = now - timedelta(seconds=settings.LEADERBOARD_VERIFY_DEBOUNCE_S + settings.LEADERBOARD_VERIFY_SWEEP_S)
    for batch in Verification.objects.filter(status=Verification.Status.PENDING, requested_at__lt=lost_before):
        counts["resent"] += verification_send(batch)
    # A batch whose worker died stops renewing its lease (grading.jobs).
    counts["reclaimed"] = jobs_sweep(VERIFICATION_JOB, now)
    due_before = now - timedelta(seconds=settings.LEADERBOARD_VERIFY_EVERY_S)
    for version_id in Exercise.objects.filter(current_version__isnull=False).values_list(
        "current_version_id", flat=True
    ):
        if not timed_top(version_id, 2).count() >= 2:
            continue  # one entry (or none) has no order to settle
        recent = Verification.objects.filter(
            Q(status=Verification.Status.DONE, finished_at__gte=due_before)
            | Q(status__in=[Verification.Status.PENDING, Verification.Status.RUNNING]),
            exercise_version_id=version_id,
        )
        if not recent.exists() and verification_request(version_id, delay_s=0):
            counts["requested"] += 1
    return counts
