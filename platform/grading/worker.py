"""What a worker does with a task: claim the row, grade or validate in the sandbox, store.

Idempotent under redelivery (a conditional UPDATE claims the work). Platform faults put the
row back in the queue and raise, so the task retries; the last try stores FAILED, never a
verdict charged to the student.
"""
from __future__ import annotations

import logging
import tempfile
from datetime import timedelta
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone

from catalog.models import ExerciseUpload
from catalog.services import upload_folder
from grader.host import Sandbox, SandboxUnavailable, grade, validate_exercise
from grading.exercises import exercise_version_spec
from grading.models import Submission
from grading.results import result_internal_error, result_is_internal_error, result_of
from grading.sandboxes import grading_sandbox
from grading.signals import submission_graded

log = logging.getLogger(__name__)


class GradingRetry(Exception):
    """The platform failed to grade (INTERNAL_ERROR); the submission is queued again."""


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


def submission_grade(*, submission_id: int, final_attempt: bool = True) -> None:
    """Grade one submission. Platform faults put it back in the queue for the task to retry."""
    if not submission_claim(submission_id):
        return  # another worker has it, or it is already graded
    submission = Submission.objects.select_related("exercise_version").get(id=submission_id)
    try:
        spec = exercise_version_spec(submission.exercise_version)
        result = result_of(grade(spec, submission.code, grading_sandbox()))
    except SandboxUnavailable:
        _release(submission_id)
        raise
    except Exception as error:  # a bug of ours must not be charged to the student
        log.exception("grading submission %s failed", submission_id)
        result = result_internal_error(error)
    if result_is_internal_error(result) and not final_attempt:
        _release(submission_id)
        raise GradingRetry(f"submission {submission_id}: {result.get('notes')}")
    _store(submission_id, result)


def _release(submission_id: int) -> None:
    Submission.objects.filter(id=submission_id, status=Submission.Status.RUNNING).update(
        status=Submission.Status.QUEUED
    )


def _store(submission_id: int, result: dict[str, Any]) -> None:
    """Store the verdict and tell receivers (leaderboards, metrics) in the same transaction."""
    failed = result_is_internal_error(result)
    with transaction.atomic():
        stored = Submission.objects.filter(id=submission_id, status=Submission.Status.RUNNING).update(
            status=Submission.Status.FAILED if failed else Submission.Status.GRADED,
            verdict=result["verdict"],
            score=None if failed else result["score"],
            result=result,
            finished_at=timezone.now(),
        )
        if stored:
            submission = Submission.objects.select_related("exercise_version").get(id=submission_id)
            submission_graded.send(sender=Submission, submission=submission)


def upload_validate(*, upload_id: int, sandbox: Sandbox | None = None) -> ExerciseUpload:
    """Prove an uploaded exercise in the sandbox, exactly as validate_content proves a folder."""
    claimed = ExerciseUpload.objects.filter(id=upload_id, status=ExerciseUpload.Status.QUEUED).update(
        status=ExerciseUpload.Status.VALIDATING
    )
    upload = ExerciseUpload.objects.get(id=upload_id)
    if not claimed:
        return upload  # another worker has it, or it is done
    try:
        with tempfile.TemporaryDirectory(prefix="upload-") as tmp:
            report = validate_exercise(upload_folder(upload, Path(tmp)), sandbox or grading_sandbox())
    except BaseException:  # a platform fault (e.g. SandboxUnavailable): queued again for the retry
        ExerciseUpload.objects.filter(id=upload_id).update(status=ExerciseUpload.Status.QUEUED)
        raise
    upload.report = report.to_dict()
    upload.error = report.error
    upload.status = ExerciseUpload.Status.VALID if report.ok and not report.skipped else ExerciseUpload.Status.INVALID
    if report.skipped:
        upload.error = report.skipped
    upload.validated_at = timezone.now()
    upload.save(update_fields=["report", "error", "status", "validated_at"])
    return upload
