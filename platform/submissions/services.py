"""The submission lifecycle: create, claim, grade, store."""
from __future__ import annotations

import functools
import logging
from datetime import timedelta

from catalog.models import Exercise
from catalog.services import exercise_version_spec
from django.conf import settings
from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone

from grader.host import Sandbox, SandboxUnavailable, get_sandbox, grade
from submissions.models import Submission
from submissions.tasks import GradingRetry, grade_submission

log = logging.getLogger(__name__)
INTERNAL_ERROR = "INTERNAL_ERROR"


def submission_create(*, user, exercise: Exercise, code: str) -> Submission:
    """Store a submission and queue it for grading once the row is committed."""
    submission = Submission.objects.create(user=user, exercise_version=exercise.current_version, code=code)
    transaction.on_commit(lambda: grade_submission.delay(submission.id))
    return submission


def submission_claim(submission_id: int) -> bool:
    """Take a queued submission (or one whose worker died); False if someone else has it."""
    now = timezone.now()
    stale = now - timedelta(seconds=settings.SUBMISSION_STALE_AFTER_S)
    claimable = Q(status=Submission.Status.QUEUED) | Q(status=Submission.Status.RUNNING, started_at__lt=stale)
    return bool(
        Submission.objects.filter(claimable, id=submission_id).update(
            status=Submission.Status.RUNNING, started_at=now, attempts=F("attempts") + 1
        )
    )


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


def submission_grade(*, submission_id: int, final_attempt: bool = True) -> None:
    """Grade one submission. Platform faults put it back in the queue for the task to retry."""
    if not submission_claim(submission_id):
        return  # another worker has it, or it is already graded
    submission = Submission.objects.select_related("exercise_version").get(id=submission_id)
    try:
        spec = exercise_version_spec(submission.exercise_version)
        result = grade(spec, submission.code, grading_sandbox()).to_dict()
    except SandboxUnavailable:
        _release(submission_id)
        raise
    except Exception as error:  # a bug of ours must not be charged to the student
        log.exception("grading submission %s failed", submission_id)
        result = {"verdict": INTERNAL_ERROR, "score": 0.0, "checks": [], "notes": [repr(error)]}
    if result["verdict"] == INTERNAL_ERROR and not final_attempt:
        _release(submission_id)
        raise GradingRetry(f"submission {submission_id}: {result.get('notes')}")
    _store(submission_id, result)


def _release(submission_id: int) -> None:
    Submission.objects.filter(id=submission_id, status=Submission.Status.RUNNING).update(
        status=Submission.Status.QUEUED
    )


def _store(submission_id: int, result: dict) -> None:
    failed = result["verdict"] == INTERNAL_ERROR
    with transaction.atomic():
        Submission.objects.filter(id=submission_id, status=Submission.Status.RUNNING).update(
            status=Submission.Status.FAILED if failed else Submission.Status.GRADED,
            verdict=result["verdict"],
            score=None if failed else result["score"],
            result=result,
            finished_at=timezone.now(),
        )
