from celery import shared_task

from grader.host import SandboxUnavailable


@shared_task(acks_late=True, autoretry_for=(SandboxUnavailable,), retry_backoff=2, retry_backoff_max=60, max_retries=4)
def validate_upload(upload_id: int) -> None:
    from catalog.authoring import upload_validate  # tasks import services, not the reverse

    upload_validate(upload_id=upload_id)
