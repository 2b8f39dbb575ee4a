"""Celery tasks: thin wrappers around the services; arguments are ids."""
from datetime import timedelta

from celery import shared_task
from django.conf import settings
from django.db import DatabaseError, InterfaceError, OperationalError
from django.utils import timezone

from sandbox import SandboxUnavailable
from submissions.logs import submission_logging


class GradingRetry(Exception):
    """The platform failed to grade (INTERNAL_ERROR); the submission is queued again."""


# Faults of the platform, never of the student: the engine, the database, our own judge.
INFRASTRUCTURE_FAULTS = (SandboxUnavailable, GradingRetry, OperationalError, InterfaceError)


@shared_task(
    bind=True,
    acks_late=True,
    reject_on_worker_lost=True,
    autoretry_for=INFRASTRUCTURE_FAULTS,
    retry_backoff=settings.GRADING_RETRY_BACKOFF_S,
    retry_backoff_max=settings.GRADING_RETRY_BACKOFF_MAX_S,
    retry_jitter=False,
    max_retries=settings.GRADING_MAX_RETRIES,
)
def grade_submission(self, submission_id: int) -> None:
    from submissions.dispatch import submission_send  # tasks import services, not the reverse
    from submissions.models import Submission
    from submissions.services import Claim, submission_fail, submission_grade

    final = self.request.retries >= (self.max_retries or 0)
    with submission_logging(submission_id):
        try:
            claim = submission_grade(submission_id=submission_id, final_attempt=final)
        except (OperationalError, InterfaceError) as error:
            if final:
                _fail_if_possible(submission_fail, submission_id, "database unavailable", error)
            raise
        if claim is Claim.BUSY:
            # Redelivered while another worker holds it (a cold shutdown, a lost pool child):
            # look again once that claim turns stale, rather than drop the message.
            row = Submission.objects.select_related("exercise_version").get(id=submission_id)
            stale_at = row.started_at + timedelta(seconds=settings.SUBMISSION_STALE_AFTER_S)
            submission_send(row, countdown=max(1.0, (stale_at - timezone.now()).total_seconds() + 1))


def _fail_if_possible(submission_fail, submission_id: int, cause: str, error: BaseException) -> None:
    try:
        submission_fail(submission_id, cause, error)
    except DatabaseError:
        pass  # still down: the row stays QUEUED or RUNNING and the sweep picks it up


@shared_task
def sweep_submissions() -> dict[str, int]:
    """Re-send lost grading tasks and reclaim stale RUNNING rows (Celery beat runs it)."""
    from submissions.dispatch import submissions_sweep

    return submissions_sweep()
