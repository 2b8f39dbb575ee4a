"""Re-measuring the top of an exercise's board in one session, so that the order at the top
does not come from gradings made hours apart on a machine whose load changed in between.

A request (after a new best reaches the top, or from beat when a board is due) makes one
PENDING Verification per version; requests while it waits join it (debounce). The task
claims it with a conditional UPDATE (a redelivered task finds it taken and returns), grades
the top entries' code again, interleaved over LEADERBOARD_VERIFY_ROUNDS rounds on one
sandbox and one seed (grader.host.remeasure), alternating the first round's direction from
one batch to the next, and stores the new ratios and intervals in one transaction. The board
then ranks them with the usual rule: overlapping intervals share a rank.

No submission is stored and the student's attempts do not change. Each grading here is a
grading like any other (correctness included): an entry whose code is not accepted this time
(wrong, too slow, crashed, timed out) is withdrawn from the ranking until a grading of the
student replaces it, and the batch records what happened. A platform fault
(INTERNAL_ERROR) says nothing about the code and changes nothing.
"""

from __future__ import annotations

import logging
import secrets
from datetime import datetime, timedelta

from celery import current_app as app
from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import F, Q, QuerySet
from django.utils import timezone

from catalog.models import Exercise, ExerciseVersion
from courses.models import Course, Membership
from courses.selectors import student_ids
from grader.contract import Kind
from grader.host import Remeasured, Sandbox, SandboxUnavailable, remeasure
from grading.dispatch import CPU_QUEUE, GPU_QUEUE
from grading.exercises import exercise_version_spec
from grading.leases import heartbeat, lapsed, lease_end
from grading.sandboxes import grading_sandbox
from leaderboards.board_cache import ranking_forget
from leaderboards.models import FULL_SCORE, Entry, Verification

log = logging.getLogger(__name__)
VERIFY_TASK = "leaderboards.tasks.verify_top"  # sent by name: the task module imports this one
BOARD_ORDER = (F("ratio_low").asc(), F("ratio").asc(), "id")  # among full scores with a ratio


def timed(version_id: int) -> QuerySet[Entry]:
    """The board's timed full scores in board order (hidden students too: course boards show them)."""
    return Entry.objects.filter(
        exercise_version_id=version_id, score__gte=FULL_SCORE, ratio_low__isnull=False, withdrawn_at__isnull=True
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
    return sorted(chosen.values(), key=lambda e: (e.ratio_low, e.ratio, e.id))


def reaches_the_top(entry: Entry) -> bool:
    """Would this (new best) entry be among the re-measured, on the site board or on the board
    of a course it belongs to? A bounded count per board."""
    if entry.score < FULL_SCORE or entry.ratio_low is None:
        return False
    ahead = timed(entry.exercise_version_id).filter(ratio_low__lt=entry.ratio_low)
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


def verification_send(batch: Verification, countdown: float = 0) -> bool:
    """Publish the task; False (logged) when the broker cannot take it now (the sweep resends)."""
    gpu = ExerciseVersion.objects.filter(id=batch.exercise_version_id, needs_gpu=True).exists()
    try:
        app.send_task(VERIFY_TASK, (batch.id,), queue=GPU_QUEUE if gpu else CPU_QUEUE, countdown=countdown)
    except Exception:  # the broker is down: the row stays PENDING and the sweep sends it
        log.warning("verification %s not sent (broker unavailable)", batch.id, exc_info=True)
        return False
    return True


def verification_run(batch_id: int, *, sandbox: Sandbox | None = None) -> Verification | None:
    """Run one batch if it is still PENDING (idempotent). Raises SandboxUnavailable with the
    batch put back to PENDING, so that a retry measures all candidates in one session again."""
    now = timezone.now()
    claimed = Verification.objects.filter(id=batch_id, status=Verification.Status.PENDING).update(
        status=Verification.Status.RUNNING, started_at=now, lease_until=lease_end(now), attempts=F("attempts") + 1
    )
    if not claimed:
        return None
    batch = Verification.objects.select_related("exercise_version__exercise").get(id=batch_id)
    # Only the attempt that claimed the batch stores it (a worker that lost its lease stores nothing).
    held = Verification.objects.filter(id=batch_id, status=Verification.Status.RUNNING, attempts=batch.attempts)
    version = batch.exercise_version
    if version.exercise.current_version_id != version.id:
        Verification.objects.filter(id=batch_id).update(
            status=Verification.Status.SUPERSEDED, finished_at=timezone.now()
        )
        return batch
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
    try:
        # A batch grades its candidates ROUNDS times, one after the other: capped at that many gradings.
        with heartbeat(held, max_s=(len(entries) * settings.LEADERBOARD_VERIFY_ROUNDS + 1)
                       * settings.SUBMISSION_STALE_AFTER_S):
            measured = remeasure(
                exercise_version_spec(version),
                [(str(e.id), e.submission.code) for e in entries],
                sandbox or grading_sandbox(),
                seed=seed,
                rounds=settings.LEADERBOARD_VERIFY_ROUNDS,
            )
    except SandboxUnavailable:
        if held.exists():
            _put_back(batch_id)
        raise
    except Exception:
        log.exception("verification %s failed", batch_id)
        held.update(status=Verification.Status.FAILED, finished_at=timezone.now())
        raise
    _store(batch, entries, measured, seed=seed, reverse=reverse)
    batch.refresh_from_db()
    return batch


def _put_back(batch_id: int) -> None:
    running = Verification.objects.filter(id=batch_id, status=Verification.Status.RUNNING)
    try:
        with transaction.atomic():
            running.update(status=Verification.Status.PENDING, started_at=None, lease_until=None)
    except IntegrityError:  # a newer request is waiting already: that one will measure
        running.update(status=Verification.Status.SUPERSEDED, finished_at=timezone.now())


@transaction.atomic
def _store(batch: Verification, entries: list[Entry], measured: list[Remeasured], *, seed: int, reverse: bool) -> None:
    """The new numbers, all in one transaction: the board never shows half a batch; nothing
    when the batch was reclaimed from this attempt meanwhile (its lease lapsed)."""
    held = Verification.objects.select_for_update().filter(
        id=batch.id, status=Verification.Status.RUNNING, attempts=batch.attempts)
    if not held.exists():
        log.warning("verification %s not stored: it was reclaimed meanwhile", batch.id)
        return
    now = timezone.now()
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
            entry.ratio, entry.ratio_low, entry.ratio_high = m.ratio
            entry.verification_id, entry.verified_at = batch.id, now
            entry.save(update_fields=["ratio", "ratio_low", "ratio_high", "verification", "verified_at"])
        elif withdrawn and entry is not None:
            log.warning("entry %s withdrawn from the ranking: re-measured %s", entry.id, m.verdict)
            entry.withdrawn_at = now
            entry.save(update_fields=["withdrawn_at"])
    Verification.objects.filter(id=batch.id).update(
        status=Verification.Status.DONE, finished_at=now, seed=seed, reversed_order=reverse, candidates=rows
    )
    ranking_forget(batch.exercise_version_id)


def verifications_sweep(now: datetime | None = None) -> dict[str, int]:
    """Beat: resend batches whose message was lost, reclaim ones whose worker died, and ask
    for every board whose last re-measuring is older than LEADERBOARD_VERIFY_EVERY_S."""
    now = now or timezone.now()
    counts = {"resent": 0, "reclaimed": 0, "requested": 0}
    lost_before = now - timedelta(seconds=settings.LEADERBOARD_VERIFY_DEBOUNCE_S + settings.LEADERBOARD_VERIFY_SWEEP_S)
    for batch in Verification.objects.filter(status=Verification.Status.PENDING, requested_at__lt=lost_before):
        counts["resent"] += verification_send(batch)
    # A batch whose worker died stops renewing its lease (grading.leases).
    for batch_id in Verification.objects.filter(lapsed(Verification.Status.RUNNING, now)).values_list(
        "id", flat=True
    ):
        _put_back(batch_id)
        counts["reclaimed"] += 1
        batch = Verification.objects.get(id=batch_id)
        if batch.status == Verification.Status.PENDING:
            verification_send(batch)
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
