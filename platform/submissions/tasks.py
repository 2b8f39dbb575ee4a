from celery import shared_task

from grader.host import SandboxUnavailable


class GradingRetry(Exception):
    """The platform failed to grade (INTERNAL_ERROR); the submission is queued again."""


@shared_task(
    acks_late=True,
    autoretry_for=(SandboxUnavailable, GradingRetry),
    retry_backoff=2,
    retry_backoff_max=60,
    max_retries=4,
)
def grade_submission(submission_id: int) -> None:
    from submissions.services import submission_grade  # tasks import services, not the reverse

    submission_grade(submission_id=submission_id, final_attempt=grade_submission_is_final())


def grade_submission_is_final() -> bool:
    request = grade_submission.request
    return request.retries >= (grade_submission.max_retries or 0)
