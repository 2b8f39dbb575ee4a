from celery import shared_task

from similarity.services import fingerprint_store


@shared_task(acks_late=True)
def fingerprint_submission(submission_id: int) -> None:
    """Fingerprint a submission whose verdict was just stored (idempotent)."""
    fingerprint_store(submission_id)
