"""The submission lifecycle: create, claim, grade, store."""
from __future__ import annotations

import enum
import functools
import logging
from datetime import timedelta

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone
from django.utils.translation import gettext as _

from catalog.models import Exercise
from catalog.services import exercise_version_spec
from grader.pipeline import grade
from sandbox import Sandbox, SandboxUnavailable, get_sandbox
from submissions.dispatch import submission_send, user_dispatch
from submissions.logs import submission_logging
from submissions.models import Submission
from submissions.tasks import GradingRetry

log = logging.getLogger(__name__)
INTERNAL_ERROR = "INTERNAL_ERROR"
# What a student reads when we gave up: our fault, never counted.
NOT_COUNTED = "We could not grade this submission because of a fault on our side; it was not counted."


class SubmissionRefused(ValidationError):
    """A limit says not now (too many in flight, too many a minute): nothing was stored."""


def submission_create(*, user, exercise: Exercise, code: str, idempotency_key: str = "") -> Submission:
    """Store a submission and queue it for grading once the row is committed.

    The same form posted twice (same ``idempotency_key``) is one submission. Per-student
    limits raise SubmissionRefused with a message saying what to wait for.
    """
    with transaction.atomic():
        get_user_model().objects.select_for_update().filter(pk=user.pk).first()  # one submit per student at a time
        mine = Submission.objects.filter(user=user)
        if idempotency_key and (earlier := mine.filter(idempotency_key=idempotency_key).first()):
            return earlier
        in_flight = mine.filter(status__in=[Submission.Status.QUEUED, Submission.Status.RUNNING]).count()
        if in_flight >= settings.SUBMISSIONS_IN_FLIGHT_MAX:
            raise SubmissionRefused(
                _("You already have %(n)s submissions waiting for a verdict. Wait for one to finish, then submit again."),
                params={"n": in_flight}, code="in_flight")
        recent = mine.filter(created_at__gte=timezone.now() - timedelta(minutes=1)).count()
        if recent >= settings.SUBMISSIONS_PER_MINUTE_MAX:
            raise SubmissionRefused(
                _("You have submitted %(n)s times in the last minute. Wait a minute, then submit again."),
                params={"n": recent}, code="per_minute")
        submission = Submission.objects.create(
            user=user, exercise_version=exercise.current_version, code=code, idempotency_key=idempotency_key)
        with submission_logging(submission.id):
            log.info("submission stored for %s", exercise.slug)
        # One grading per student in the broker: a later one is sent when the one before is stored.
        if not mine.filter(status__in=[Submission.Status.QUEUED, Submission.Status.RUNNING], id__lt=submission.id).exists():
            transaction.on_commit(lambda: submission_send(submission))
    return submission


class Claim(enum.Enum):
    TAKEN = "taken"  # ours to grade
    BUSY = "busy"  # another worker is grading it (not yet stale): try again later
    DONE = "done"  # graded, failed, or not this student's turn


def submission_claim(submission_id: int) -> tuple[Claim, int]:
    """Take a queued submission (or one whose worker died) with a conditional UPDATE.

    Returns the claim and the attempt number that owns the row: only that attempt may store.
    """
    now = timezone.now()
    stale = now - timedelta(seconds=settings.SUBMISSION_STALE_AFTER_S)
    claimable = Q(status=Submission.Status.QUEUED) | Q(status=Submission.Status.RUNNING, started_at__lt=stale)
    taken = Submission.objects.filter(claimable, id=submission_id).update(
        status=Submission.Status.RUNNING, started_at=now, attempts=F("attempts") + 1
    )
    row = Submission.objects.filter(id=submission_id).values("status", "attempts").first()
    if taken:
        return Claim.TAKEN, row["attempts"]
    if row and row["status"] == Submission.Status.RUNNING:
        return Claim.BUSY, row["attempts"]
    return Claim.DONE, 0


def grading_sandbox() -> Sandbox:
    """The sandbox the settings name; one per worker process, so a warm pool outlives tasks."""
    return _sandbox_for(
        settings.SANDBOX_BACKEND,
        settings.SANDBOX_IMAGE,
        settings.SANDBOX_RUNTIME,
        settings.SANDBOX_POOL_SIZE,
        settings.SANDBOX_ALLOW_UNISOLATED,
    )


@functools.cache
def _sandbox_for(backend: str, image: str, runtime: str, pool_size: int, allow_unisolated: bool) -> Sandbox:
    return get_sandbox(
        backend, image=image, runtime=runtime, pool_size=pool_size, allow_unisolated=allow_unisolated
    )


def submission_grade(*, submission_id: int, final_attempt: bool = True) -> Claim:
    """Grade one submission. Platform faults put it back in the queue for the task to retry;
    on the final attempt they store FAILED, never a verdict charged to the student."""
    claim, attempt = submission_claim(submission_id)
    if claim is not Claim.TAKEN:
        log.info("not graded here: %s", claim.value)
        return claim
    submission = Submission.objects.select_related("exercise_version").get(id=submission_id)
    log.info("grading (attempt %s)", attempt)
    try:
        spec = exercise_version_spec(submission.exercise_version)
        result = grade(spec, submission.code, grading_sandbox()).to_dict()
    except SandboxUnavailable as error:
        if not final_attempt:
            _release(submission_id, attempt)
            raise
        result = _failed("sandbox unavailable", error)
    except Exception as error:  # a bug of ours must not be charged to the student
        log.exception("grading failed")
        result = _failed("internal error", error)
    if result["verdict"] == INTERNAL_ERROR and not final_attempt:
        _release(submission_id, attempt)
        raise GradingRetry(f"submission {submission_id}: {result.get('notes')}")
    _store(submission_id, attempt, result)
    return claim


def submission_fail(submission_id: int, cause: str, error: BaseException) -> None:
    """The last retry of an infrastructure fault ran out: store FAILED, not counted."""
    Submission.objects.filter(id=submission_id, status__in=[Submission.Status.QUEUED, Submission.Status.RUNNING]).update(
        status=Submission.Status.FAILED, verdict=INTERNAL_ERROR, score=None, result=_failed(cause, error),
        finished_at=timezone.now())
    log.error("stored FAILED (%s): %r", cause, error)
    user_dispatch(Submission.objects.values_list("user_id", flat=True).get(id=submission_id))


def submission_requeue(submission_ids) -> int:
    """Operators: put FAILED (or stuck) submissions back in the queue; returns how many."""
    rows = Submission.objects.filter(id__in=list(submission_ids)).exclude(status=Submission.Status.GRADED)
    users = set(rows.values_list("user_id", flat=True))
    count = rows.update(status=Submission.Status.QUEUED, verdict="", score=None, result=None, finished_at=None,
                        attempts=F("attempts") + 1)
    for user_id in users:
        transaction.on_commit(lambda user_id=user_id: user_dispatch(user_id))
    return count


def _failed(cause: str, error: BaseException) -> dict:
    return {"verdict": INTERNAL_ERROR, "score": 0.0, "checks": [], "cause": cause, "notes": [NOT_COUNTED, repr(error)]}


def _release(submission_id: int, attempt: int) -> None:
    Submission.objects.filter(id=submission_id, status=Submission.Status.RUNNING, attempts=attempt).update(
        status=Submission.Status.QUEUED
    )


def _store(submission_id: int, attempt: int, result: dict) -> None:
    failed = result["verdict"] == INTERNAL_ERROR
    with transaction.atomic():
        stored = Submission.objects.filter(id=submission_id, status=Submission.Status.RUNNING, attempts=attempt).update(
            status=Submission.Status.FAILED if failed else Submission.Status.GRADED,
            verdict=result["verdict"],
            score=None if failed else result["score"],
            result=result,
            finished_at=timezone.now(),
        )
        if stored:
            log.info("verdict stored: %s", result["verdict"])
            user_id = Submission.objects.values_list("user_id", flat=True).get(id=submission_id)
            transaction.on_commit(lambda: user_dispatch(user_id))
        else:
            log.warning("verdict %s not stored: the submission was reclaimed meanwhile", result["verdict"])
