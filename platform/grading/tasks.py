"""Celery tasks: thin wrappers around grading.worker; arguments are ids."""
from celery import shared_task

from grader.host import SandboxUnavailable
from grading.worker import GradingRetry, submission_grade, upload_validate


@shared_task(
    acks_late=True,
    autoretry_for=(SandboxUnavailable, GradingRetry),
    retry_backoff=2,
    retry_backoff_max=60,
    max_retries=4,
)
def grade_submission(submission_id: int) -> None:
    submission_grade(submission_id=submission_id, final_attempt=grade_submission_is_final())


def grade_submission_is_final() -> bool:
    request = grade_submission.request
    return request.retries >= (grade_submission.max_retries or 0)


@shared_task(acks_late=True, autoretry_for=(SandboxUnavailable,), retry_backoff=2, retry_backoff_max=60, max_retries=4)
def validate_upload(upload_id: int) -> None:
    upload_validate(upload_id=upload_id)
