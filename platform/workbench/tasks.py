from celery import shared_task

from sandbox import SandboxUnavailable


@shared_task(acks_late=True, autoretry_for=(SandboxUnavailable,), retry_backoff=2, retry_backoff_max=30, max_retries=3)
def run_visible_checks(practice_id: int) -> None:
    from workbench.services import practice_run_grade  # tasks import services, not the reverse

    practice_run_grade(practice_id=practice_id)
