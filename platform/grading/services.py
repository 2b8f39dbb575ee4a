"""Entry points for the web side: create a submission, queue an upload's validation."""
from __future__ import annotations

from datetime import datetime

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils.translation import gettext as _

from accounts.models import User
from catalog.models import Exercise, ExerciseUpload
from grading.models import Submission
from grading.tasks import grade_submission, validate_upload


def submission_code_check(code: str) -> None:
    """Raise ValidationError, with one message saying what to fix, for code we will not grade."""
    if "\x00" in code or not _encodable(code):
        raise ValidationError(_("Your code must be UTF-8 text without NUL characters."), code="encoding")
    if not code.strip():
        raise ValidationError(_("Your submission is empty: write some code first."), code="empty")
    size = len(code.encode("utf-8"))
    if size > settings.SUBMISSION_MAX_BYTES:
        raise ValidationError(
            _("Your code is %(size)s bytes; the limit is %(limit)s bytes."),
            params={"size": size, "limit": settings.SUBMISSION_MAX_BYTES},
            code="size",
        )


def _encodable(code: str) -> bool:
    try:
        code.encode("utf-8")
    except UnicodeEncodeError:  # lone surrogates
        return False
    return True


def submission_create(*, user: User, exercise: Exercise, code: str) -> Submission:
    """Store a submission and queue it for grading once the row is committed.

    Bad code (empty, too large, not UTF-8 text) raises ValidationError and stores nothing.
    """
    submission_code_check(code)
    version = exercise.current_version
    assert version is not None, f"{exercise} has no version to submit to: offer only published exercises"
    submission = Submission.objects.create(user=user, exercise_version=version, code=code)
    transaction.on_commit(lambda: grade_submission.delay(submission.id))
    return submission


def upload_validation_queue(upload: ExerciseUpload) -> None:
    """Validate ``upload`` in the sandbox on a worker, once its row is committed."""
    transaction.on_commit(lambda: validate_upload.delay(upload.id))


def submission_requeue(submission_id: int, *, graded_before: datetime) -> bool:
    """Send a finished submission back to be graded again (a regrade). False when it was
    requeued since ``graded_before`` already, so a redelivered regrade job sends nothing twice."""
    requeued = Submission.objects.filter(
        id=submission_id,
        status__in=[Submission.Status.GRADED, Submission.Status.FAILED],
        finished_at__lt=graded_before,
    ).update(status=Submission.Status.QUEUED, started_at=None)
    if requeued:
        transaction.on_commit(lambda: grade_submission.delay(submission_id))
    return bool(requeued)
