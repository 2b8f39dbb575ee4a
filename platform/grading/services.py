"""Entry points for the web side: create a submission, queue an upload's validation."""
from __future__ import annotations

import functools
import logging
from collections.abc import Iterable
from datetime import datetime, timedelta

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import F
from django.utils import timezone
from django.utils.translation import gettext as _

from accounts.models import User
from catalog.models import Exercise, ExerciseUpload, ExerciseVersion
from grading.dispatch import submission_send, user_dispatch
from grading.logs import submission_logging
from grading.models import Submission
from grading.tasks import validate_upload

log = logging.getLogger(__name__)
# Waiting for a verdict (the per-student limit counts these) ...
IN_FLIGHT = (Submission.Status.QUEUED, Submission.Status.RUNNING, Submission.Status.MEASURING)
# ... and in the broker's line before a new one (one measuring again waits for its countdown, not in line).
IN_LINE = (Submission.Status.QUEUED, Submission.Status.RUNNING)


class SubmissionRefused(ValidationError):
    """A limit says not now (too many in flight, too many a minute): nothing was stored."""


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


def submission_create(
    *,
    user: User,
    exercise: Exercise,
    code: str,
    idempotency_key: str = "",
    version: ExerciseVersion | None = None,
) -> Submission:
    """Store a submission and queue it for grading once the row is committed.

    It is graded against ``version`` (an assignment's pinned one), else the exercise's
    current version. Bad code (empty, too large, not UTF-8 text) raises ValidationError and
    stores nothing; so do the per-student limits (SubmissionRefused, saying what to wait
    for). The same form posted twice (same ``idempotency_key``) is one submission.
    """
    submission_code_check(code)
    version = version or exercise.current_version
    assert version is not None, f"{exercise} has no version to submit to: offer only published exercises"
    assert version.exercise_id == exercise.id, f"version {version} is not a version of {exercise}"
    with transaction.atomic():
        User.objects.select_for_update().filter(pk=user.pk).first()  # one submit per student at a time
        mine = Submission.objects.filter(user=user)
        if idempotency_key and (earlier := mine.filter(idempotency_key=idempotency_key).first()):
            return earlier
        in_flight = mine.filter(status__in=IN_FLIGHT).count()
        if in_flight >= settings.SUBMISSIONS_IN_FLIGHT_MAX:
            raise SubmissionRefused(
                _("You already have %(n)s submissions waiting for a verdict. "
                  "Wait for one to finish, then submit again."),
                params={"n": in_flight}, code="in_flight")
        recent = mine.filter(created_at__gte=timezone.now() - timedelta(minutes=1)).count()
        if recent >= settings.SUBMISSIONS_PER_MINUTE_MAX:
            raise SubmissionRefused(
                _("You have submitted %(n)s times in the last minute. Wait a minute, then submit again."),
                params={"n": recent}, code="per_minute")
        submission = Submission.objects.create(user=user, exercise_version=version, code=code,
                                               idempotency_key=idempotency_key)
        with submission_logging(submission.id):
            log.info("submission stored for %s", exercise.slug)
        # One grading per student in the broker (fair queues): a later one is sent when the
        # one before it is stored (grading.work), or by the sweep.
        if not mine.filter(status__in=IN_LINE, id__lt=submission.id).exists():
            transaction.on_commit(lambda: submission_send(submission))
    return submission


def submission_resubmit(*, original: Submission, version: ExerciseVersion) -> Submission:
    """The platform submits a student's code again under another version (an assignment moved
    to it): no per-student limit applies (the student did not ask), and the work keeps the
    time it was first received."""
    with transaction.atomic():
        submission = Submission.objects.create(
            user_id=original.user_id,
            exercise_version=version,
            code=original.code,
            received_at=original.received_at or original.created_at,
        )
        mine = Submission.objects.filter(user_id=original.user_id, status__in=IN_LINE, id__lt=submission.id)
        if not mine.exists():  # else it is sent in the student's turn, after the one in flight
            transaction.on_commit(lambda: submission_send(submission))
    return submission


def submissions_retry(submission_ids: Iterable[int]) -> int:
    """Operators: grade FAILED (or stuck) submissions again; graded ones stay as they are."""
    rows = Submission.objects.filter(id__in=list(submission_ids)).exclude(status=Submission.Status.GRADED)
    users = set(rows.values_list("user_id", flat=True))
    count = rows.update(status=Submission.Status.QUEUED, verdict="", score=None, result=None, finished_at=None,
                        attempts=F("attempts") + 1, measure_again_at=None)
    for user_id in users:
        transaction.on_commit(functools.partial(user_dispatch, user_id))
    return count


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
    ).update(status=Submission.Status.QUEUED, started_at=None, measure_again_at=None)  # a regrade may measure again
    if requeued:  # sent in the student's turn, to the queue its exercise needs
        user_id = Submission.objects.values_list("user_id", flat=True).get(id=submission_id)
        transaction.on_commit(functools.partial(user_dispatch, user_id))
    return bool(requeued)
