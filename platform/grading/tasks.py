"""Celery tasks: thin wrappers around grading.worker and grading.dispatch; arguments are ids."""
from __future__ import annotations

from celery import Task, shared_task
from django.conf import settings
from django.db import InterfaceError, OperationalError

from grader.host import SandboxUnavailable
from grading.dispatch import submissions_sweep
from grading.logs import submission_logging
from grading.measure_again import measure_again_sweep
from grading.worker import GradingRetry, submission_fail, submission_grade, submission_look_again, upload_validate

# Faults of the platform, never of the student: the engine, the database, our own judge.
INFRASTRUCTURE_FAULTS = (SandboxUnavailable, GradingRetry, OperationalError, InterfaceError)


@shared_task(
    bind=True,
    acks_late=True,
    reject_on_worker_lost=True,  # a pool child killed mid-grading puts the message back
    autoretry_for=INFRASTRUCTURE_FAULTS,
    retry_backoff=settings.GRADING_RETRY_BACKOFF_S,
    retry_backoff_max=settings.GRADING_RETRY_BACKOFF_MAX_S,
    retry_jitter=False,
    max_retries=settings.GRADING_MAX_RETRIES,
)
def grade_submission(self: Task, submission_id: int) -> None:
    final = self.request.retries >= (self.max_retries or 0)
    with submission_logging(submission_id):
        try:
            claim = submission_grade(submission_id=submission_id, final_attempt=final)
        except (OperationalError, InterfaceError) as error:
            if final:
                submission_fail(submission_id, "database unavailable", error)
            raise
        submission_look_again(submission_id, claim)


@shared_task
def sweep_submissions() -> dict[str, int]:
    """Re-send lost grading tasks and reclaim stale RUNNING rows (Celery beat runs it)."""
    return {**submissions_sweep(), "measured_again": measure_again_sweep()}


@shared_task(acks_late=True, autoretry_for=(SandboxUnavailable,), retry_backoff=2, retry_backoff_max=60, max_retries=4)
def validate_upload(upload_id: int) -> None:
    upload_validate(upload_id=upload_id)
